"""hfpatch: backport upstream fixes into an installed transformers, on disk, safely and reversibly.

One word, one meaning (the code and its messages use these, and no other word for them):

    catalog        a directory of entries (the built-in one, or one given by --catalog / [tool.hfpatch])
    entry          one directory of a catalog: patch.json, the fixed texts, a probe (hfpatch.entry reads and writes
                   it); a `Patch` is an entry as read
    file           a .py file of a distribution that a patch changes (`PatchFile`), by its path inside site-packages
    shape          what a patch does to a file (edit its statements, or remove its code: `FileShape`), and to a
                   statement (`Shape`: replace it, insert it at its anchor where absent, delete it); each shape's
                   judging, editing and describing is in hfpatch.shapes
    target         a statement a patch changes, named by its key (`Target`); never a file or an interpreter
    key            a statement's name in its scope, the same in every release (`f`, `Config.__init__`, `import os`)
    form           one text a target had in real releases, known by its digest (`Form`); a known file is a whole
                   released file known by its digest (`KnownFile`)
    verdict        what a form or a known file is for the patch: needs-patch, fixed, not-applicable (`Verdict`);
                   `hfpatch new`'s table adds absent, not-safe and skipped (`new.judge.TableVerdict`)
    classification what an installed file is for the patch, from its code (`classify.Classification`), made of
                   each target's (`classify.TargetClassification`)
    judgement      what `hfpatch new` found of one target in one release (`new.judge.Judgement`, its `Standing`)
                   and of one file (`new.judge.FileJudgement`)
    condition      where one patch stands in one environment, the word `check` prints (`diagnosis.Condition`)
    reason         why, with its fields, for the renderer to say (render alone writes sentences and paths)
    finding        what an entry's check found in an environment, as an advisory reads it (`advisory.Finding`)
    plan           what a command will do to one patch in one environment (`plan.Plan`; `executor.FilePlan` is one
                   file's part of it); what `hfpatch new` was asked is a request (`new.request.Request`, checked:
                   `Asked`), never a plan
    interpreter    a Python that --python names (`environment.Python`); its environment is what it imports, an
                   installation the distribution found there (`environment.Installation`)
    release        a version of a distribution on the index; a build is a wheel or tree of no release
                   (--fixed-from); an edit is what the user changed in an installed distribution (--from-edits)
    RECORD         the wheel's list of installed files and their digests (hfpatch.wheelrecord); never hfpatch's
                   state, which is the state (hfpatch.state), with the original (the backup) of each file
    probe          an entry's probe.py, which `verify` runs in the application's interpreter
    advisory       a CVE, GHSA or PYSEC id; the register holds a record of each (hfpatch.advisory)
"""

__version__ = "0.3.0"
