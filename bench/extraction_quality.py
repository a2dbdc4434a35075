"""How well the offline extractor writes memories: before (main's code at the start of this branch) and after.

Runs `twin.text.extractor.extract` on tests/extraction_corpus.py (English, German and French chat messages, notes and
e-mails, read at `NOW`), keeps what the worthiness gate keeps (`twin.text.capture_rules.unworthy`), and prints per
language: texts, memories, how many are self-contained third-person sentences (`twin.text.standalone.
standalone_problem` finds nothing: no first or second person, a subject, no dangling pronoun, no relative date,
verb agreement; a note's "<title>: " is not part of the sentence), true facts dropped (a fact is kept when one
memory holds every key word, case and accents folded), and junk (memories that hold no fact of their text).

BEFORE is the code of `--before` (default: the merge base of HEAD and main), checked out with `git worktree` in a
temporary directory and run in a child process; AFTER is this tree. Both are scored by this tree's check.

    .venv/bin/python bench/extraction_quality.py [--before REV] [--show]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path

from _common import REPO_ROOT, write_json

sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "tests"))

from extraction_corpus import CORPUS, NOW

from twin.text.standalone import standalone_problem

NOTE_TITLE = "notes.md"
RUNNER = """
import inspect, json, sys
from datetime import datetime
from twin.text.capture_rules import unworthy
from twin.text.extractor import extract
job = json.load(sys.stdin)
now = datetime.fromisoformat(job["now"])
timed = "now" in inspect.signature(extract).parameters
out = []
for kind, text in job["texts"]:
    kwargs = {"document_title": job["title"]} if kind == "note" else {}
    if timed:
        kwargs["now"] = now
    out.append([c.content for c in extract(text, **kwargs) if unworthy(c.content) is None])
json.dump(out, sys.stdout)
"""


def run_extractor(code_root: Path) -> dict[str, list[list[str]]]:
    """`{language: [memories of each text]}` from the code under `code_root`, in a child process."""
    out = {}
    for language, texts in CORPUS.items():
        job = {"now": NOW.isoformat(), "title": NOTE_TITLE, "texts": [[kind, text] for kind, text, _ in texts]}
        done = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(job), capture_output=True, text=True,
                              env={"PYTHONPATH": str(code_root), "PATH": "/usr/bin:/bin"}, check=True, cwd=code_root)
        out[language] = json.loads(done.stdout)
    return out


def fold(text: str) -> str:
    """Case-folded, accents removed: how key words are matched."""
    return "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))


def holds(memory: str, fact: str) -> bool:
    """True when `memory` holds every key word of `fact` (as a part of a word: "koch" in "kocht")."""
    folded = fold(memory)
    return all(fold(word) in folded for word in fact.split())


def score(memories: list[list[str]], texts: list, show: bool = False) -> dict:
    """The figures of one language (see the module docstring)."""
    figures = {"texts": len(texts), "memories": 0, "self_contained": 0, "facts": 0, "dropped": 0, "junk": 0}
    for found, (kind, text, facts) in zip(memories, texts, strict=True):
        figures["memories"] += len(found)
        figures["facts"] += len(facts)
        for memory in found:
            sentence = memory.removeprefix(f"{NOTE_TITLE}: ") if kind == "note" else memory
            problem = standalone_problem(sentence)
            figures["self_contained"] += problem is None
            junk = not any(holds(memory, fact) for fact in facts)
            figures["junk"] += junk
            if show and (problem or junk):
                print(f"    {'junk ' if junk else ''}{problem or ''} | {memory}")
        for fact in facts:
            if not any(holds(memory, fact) for memory in found):
                figures["dropped"] += 1
                if show:
                    print(f"    dropped {fact!r} | {text[:70]!r}")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default=None, help="the revision to compare with (default: merge base with main)")
    parser.add_argument("--show", action="store_true", help="print every memory that fails a check, every drop")
    args = parser.parse_args()
    git = ["git", "-C", str(REPO_ROOT)]
    before = args.before or subprocess.run([*git, "merge-base", "HEAD", "main"], capture_output=True, text=True,
                                           check=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="twin-before-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run([*git, "worktree", "add", "--detach", "--quiet", str(tree), before], check=True)
        try:
            runs = {"before": run_extractor(tree), "after": run_extractor(REPO_ROOT)}
        finally:
            subprocess.run([*git, "worktree", "remove", "--force", str(tree)], check=True)
    results = {}
    print(f"{'language':<9} {'run':<7} {'texts':>5} {'memories':>8} {'self-contained':>15} {'facts':>6} "
          f"{'dropped':>8} {'junk':>5}")
    for language, texts in CORPUS.items():
        for run, memories in runs.items():
            if args.show:
                print(f"  {language} {run}:")
            f = score(memories[language], texts, args.show)
            results[f"{language}/{run}"] = f
            share = f"{f['self_contained']} ({100 * f['self_contained'] / max(1, f['memories']):.0f}%)"
            print(f"{language:<9} {run:<7} {f['texts']:>5} {f['memories']:>8} {share:>15} {f['facts']:>6} "
                  f"{f['dropped']:>8} {f['junk']:>5}")
    write_json("extraction_quality", {"before": before, "now": NOW.isoformat(), "figures": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
