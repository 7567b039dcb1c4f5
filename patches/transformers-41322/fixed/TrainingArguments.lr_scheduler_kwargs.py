    lr_scheduler_kwargs: Optional[Union[dict, str]] = field(
        default=None,
        metadata={
            "help": (
                "Extra parameters for the lr_scheduler such as {'num_cycles': 1} for the cosine with hard restarts."
            )
        },
    )
