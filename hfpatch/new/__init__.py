"""`hfpatch new`: a catalog entry written from the upstream releases' wheels, one job a module.

    request.py   the options, checked (each fault a UsageError)
    wheels.py    one reader of a wheel; wheels from --find-links or from the package index, cached
    judge.py     pure: what one release is for the fix, target by target, and what it comes to
    assemble.py  pure: the entry from every release's judgement, checked against every release
    table.py     the release table it prints
    command.py   the shell: reads the releases, prints the table, writes the entry atomically

Only `hfpatch new` imports this package: `check` and `apply` never pay for packaging's wheel code.
"""
