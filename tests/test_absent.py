"""A release that never had an entry's file is none of the entry's concern; a file the release installed and that is
gone since is an error. Real `hfpatch new` and hfpatch processes over the made-up distribution's wheels.

`new ... --since 1.0` reads 1.0 on, so the entry knows nothing of 0.8, which has no madeup/basket.py (its RECORD
does not list it): check, apply and verify leave 0.8 alone and exit 0, whatever range the entry was written from.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest
import wheelfactory as factory
from support import Site, hfpatch

PATCH_ID = "madeup-basket-late"


class Written(NamedTuple):
    wheels: Path
    catalog: Path

    def site(self, version: str, root: Path) -> Site:
        """The release installed from its wheel as an installer leaves it, with the entry's catalog."""
        factory.install(self.wheels / f"madeup-{version}-py3-none-any.whl", root)
        return Site(root, factory.NAME, version, factory.BASKET, PATCH_ID, catalog=self.catalog)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Written:
    wheels = tmp_path_factory.mktemp("wheels")
    factory.build(wheels, ("0.8", "1.0", "1.1", "2.0"))
    catalog = tmp_path_factory.mktemp("catalog")
    args = ["--target", "madeup:madeup.basket:Basket.add", "--fixed-in", "2.0", "--since", "1.0"]
    done = hfpatch("new", PATCH_ID, *args, "--catalog", str(catalog), "--find-links", str(wheels))
    assert done.code == 0, done.out + done.err
    return Written(wheels, catalog)


@pytest.mark.parametrize("command", ["check", "apply", "verify"])
def test_a_release_that_never_had_the_file_is_not_applicable_for_every_command(
    written: Written, tmp_path: Path, command: str
) -> None:
    site = written.site("0.8", tmp_path / "site")
    assert not site.file.exists()
    done = site.run(command)
    assert done.code == 0, done.out + done.err
    assert "has no madeup/basket.py (its RECORD does not list it)" in done.text, done.out
    assert "reinstall" not in done.out + done.err
    assert not site.holds_state


def test_a_file_the_release_installed_and_that_is_gone_is_still_an_error(written: Written, tmp_path: Path) -> None:
    site = written.site("1.0", tmp_path / "site")
    site.file.unlink()
    for command in ("check", "apply"):
        done = site.run(command)
        assert done.code == 2, done.out + done.err
        assert "madeup/basket.py is missing; reinstall madeup" in done.out + done.err
