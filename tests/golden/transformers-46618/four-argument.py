def _compute_local_source_files_hash(
    pretrained_model_name_or_path: str | os.PathLike,
    module_file: str | os.PathLike,
    resolved_module_file: str | os.PathLike,
    modules_needed: list[str],
) -> str:
    """
    Computes a stable hash from the bytes of the local source file and its direct relative-import source files.
    """
    model_path = Path(pretrained_model_name_or_path).resolve()
    module_parent = Path(module_file).parent

    resolved_module_file = Path(resolved_module_file).resolve()

    def _resolve_relative_source_path(source_file_path: Path) -> str:
        try:
            return source_file_path.relative_to(model_path).as_posix()
        except ValueError:
            # Fallback for edge cases where the source file is not under the local model directory.
            return source_file_path.as_posix()

    files_to_hash = [
        (_resolve_relative_source_path(resolved_module_file), resolved_module_file),
    ]
    for module_needed in modules_needed:
        module_needed_path = (model_path / module_parent / f"{module_needed}.py").resolve()
        files_to_hash.append((_resolve_relative_source_path(module_needed_path), module_needed_path))

    source_files_hash = hashlib.sha256()
    for relative_path, file_path in sorted(files_to_hash, key=lambda entry: entry[0]):
        source_files_hash.update(relative_path.encode("utf-8"))
        source_files_hash.update(file_path.read_bytes())

    return source_files_hash.hexdigest()[:16]
