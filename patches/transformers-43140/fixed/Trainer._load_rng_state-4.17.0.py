    def _load_rng_state(self, checkpoint):
        # Load RNG states from `checkpoint`
        if checkpoint is None:
            return

        local_rank = xm.get_local_ordinal() if is_torch_tpu_available() else self.args.local_rank
        if local_rank != -1:
            rng_file = os.path.join(checkpoint, f"rng_state_{local_rank}.pth")
            if not os.path.isfile(os.path.join(checkpoint, rng_file)):
                logger.info(
                    f"Didn't find an RNG file for process {local_rank}, if you are resuming a training that "
                    "wasn't launched in a distributed fashion, reproducibility is not guaranteed."
                )
                return
        else:
            rng_file = os.path.join(checkpoint, "rng_state.pth")
            if not os.path.isfile(rng_file):
                logger.info(
                    "Didn't find an RNG file, if you are resuming a training that was launched in a distributed "
                    "fashion, reproducibility is not guaranteed."
                )
                return

        # CVE-2026-1839: never unpickle the file (weights_only=True), and never on torch older than 2.6, whose
        # weights_only loader runs code too (CVE-2025-32434); hfpatch carries transformers#43140 here.
        if version.parse(torch.__version__).release < (2, 6):
            raise ValueError(
                "Resuming from a checkpoint's RNG state needs torch 2.6 or later: older torch.load runs code "
                "from the file even with weights_only=True (CVE-2025-32434). Upgrade torch to resume."
            )
        # The numpy types np.random.get_state() pickles, which weights_only=True refuses unless allowed.
        numpy_core = np._core if version.parse(np.__version__).major >= 2 else np.core
        rng_types = [numpy_core.multiarray._reconstruct, np.ndarray, np.dtype, type(np.dtype(np.uint32))]
        with torch.serialization.safe_globals(rng_types):
            checkpoint_rng_state = torch.load(rng_file, weights_only=True)
        random.setstate(checkpoint_rng_state["python"])
        np.random.set_state(checkpoint_rng_state["numpy"])
        torch.random.set_rng_state(checkpoint_rng_state["cpu"])
        if torch.cuda.is_available():
            if self.args.local_rank != -1:
                torch.cuda.random.set_rng_state(checkpoint_rng_state["cuda"])
            else:
                try:
                    torch.cuda.random.set_rng_state_all(checkpoint_rng_state["cuda"])
                except Exception as e:
                    logger.info(
                        f"Didn't manage to set back the RNG states of the GPU because of the following error:\n {e}"
                        "\nThis won't yield the same results as if the training had not been interrupted."
                    )
        if is_torch_tpu_available():
            xm.set_rng_state(checkpoint_rng_state["xla"])
