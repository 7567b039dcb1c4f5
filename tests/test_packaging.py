"""What the wheel puts into site-packages: hfpatch with its catalog, and no top-level `patches` package."""

from __future__ import annotations

import importlib.metadata
import importlib.util


def test_the_catalog_ships_inside_hfpatch() -> None:
    files = {str(path) for path in importlib.metadata.files("hfpatch") or ()}
    assert "hfpatch/patches/transformers_46618/__init__.py" in files
    assert "hfpatch/patches/transformers_46618/transform.py" in files
    assert "hfpatch/patches/transformers_46618/probe.py" in files
    assert not [path for path in files if path.startswith("patches/")]


def test_no_top_level_patches_package_is_installed() -> None:
    assert importlib.util.find_spec("patches") is None


def test_runtime_dependencies_are_click_libcst_and_packaging_only() -> None:
    requires = importlib.metadata.requires("hfpatch") or []
    names = sorted(requirement.split(">")[0].split("=")[0].split(";")[0].strip() for requirement in requires)
    assert names == ["click", "libcst", "packaging"]


def test_the_catalog_loads_without_libcst() -> None:
    import subprocess
    import sys

    script = (
        "import sys; from hfpatch.catalog import load_catalog; "
        "print([p.package_name for p in load_catalog()], 'libcst' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd="/")
    assert done.stdout.strip() == "['hfpatch.patches.transformers_46618'] False"
