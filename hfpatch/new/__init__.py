"""`hfpatch new`: a catalog entry written from the upstream releases' wheels, one step a module.

    request.py    what was asked: the options (Request), checked (Asked), each fault a UsageError
    selection.py  pure: which releases, before and after the fix, and which the run may read
    wheels.py     one reader of a wheel; wheels from --find-links or from the package index, cached
    sources.py    where the fixed text comes from: a release's or a build's wheel, a source tree, an edit
    reading.py    the releases' texts: the files the fix changes, release by release, and the walk back
    progress.py   how far the reading got: a line on a terminal, a line now and then in a log
    judge.py      pure: what one release is for the fix, target by target, and what it comes to
    assemble.py   pure: the fix understood, the entry from every release's judgement, checked against every release
    table.py      the release table it prints
    draft.py      the entry as written: header, about lines, what an entry replaced kept, the probe
    skeleton.py   the probe skeleton an entry starts with
    adoption.py   --from-edits: the edit must be what the entry carries; the edited environment adopted
    command.py    `run`: the steps strung together, the table and what was written printed

The entry's directory is written by hfpatch.entry.write. Only `hfpatch new` imports this package: `check` and
`apply` never pay for packaging's wheel code.
"""
