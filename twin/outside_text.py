"""Text from outside the twin made harmless where it enters and where it is shown (DESIGN.md invariant 9: the rule
"clean control characters" lives here, once).

Outside text (file contents and names, email subjects and senders, chat names, browser titles, `--source`, an
import file, a model's answer) may hold terminal controls: escape sequences (`ESC[2J` clears the screen, OSC 52
`ESC]52;c;…BEL` writes the clipboard, CSI with parameters moves the cursor), C1 controls (U+009B is a one-char
CSI), NUL and DEL, line breaks that forge a second diary line (`\\n`, `\\r`, U+2028/U+2029, NEL), bidi controls
that show text in another order than it is stored (U+202A-202E, U+2066-2069, U+200E/F, U+061C), and lone
surrogates (from JSON `"\\ud800"` or an undecodable file name), which cannot even be written as UTF-8.

Three forms, one character class (`UNSAFE`):
- memory content (`strip_controls`): the controls are dropped (escape sequences whole), tabs and line breaks
  kept (as `\\n`): a memory is prose, and a dropped control loses nothing of it;
- names (`clean_name`: a file path as it becomes a `file:` source, ref or diary line, `--source`): every unsafe
  character, line breaks included, becomes a visible escape (`\\x1b`, `\\u202e`, `\\ud800`) and a backslash is
  doubled, so the name stays on one line and still identifies its file: two different names never clean to the
  same text. Ordinary names ("Zoë's Café – 東京.md", emoji with zero-width joiners) are unchanged;
- printing (`escape_controls`, `json_text`): the same visible escapes, backslashes left as they are (a human
  reads it); a line break is kept only where the caller means one.
Zero-width joiners and non-joiners, variation selectors and emoji tag characters are not controls: they are
kept everywhere (👨‍👩‍👧 and Persian or Indic text need them).
"""

from __future__ import annotations

import json
import re
import unicodedata

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""Unicode's bidirectional formatting characters (UAX #9): marks, embeddings, overrides and isolates."""
UNSAFE = re.compile(f"[\\x00-\\x08\\x0a-\\x1f\\x7f-\\x9f{BIDI_CONTROLS}\\u2028\\u2029\\ud800-\\udfff]")
"""Every character that must not reach a terminal or a diary line raw: C0 controls but tab, DEL, C1 controls,
bidi controls, the Unicode line and paragraph separators and lone surrogates."""
_ESCAPE_SEQUENCE = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|[\]PX^_][^\x07\x1b\x9c]*(\x07|\x1b\\|\x9c)|[@-Z\\-_])"
                              r"|\x9b[0-?]*[ -/]*[@-~]|[\x90\x98\x9d-\x9f][^\x07\x1b\x9c]*(\x07|\x1b\\|\x9c)")
"""ECMA-48 sequences: CSI (`ESC[` or U+009B, parameters, final byte); the control strings OSC (`ESC]`), DCS
(`ESC P`, e.g. XTGETTCAP `ESC P +q … ESC \\`), SOS (`ESC X`), PM (`ESC ^`) and APC (`ESC _`), or their C1 forms
U+009D, U+0090, U+0098, U+009E, U+009F, each up to its BEL or ST (`ESC \\` or U+009C), removed whole; then
two-char escapes (an unterminated string loses only its introducer)."""
_LINE_BREAK = re.compile("\r\n?|[\u2028\u2029\x85]")


def escape_char(ch: str) -> str:
    """One character as a visible escape: `\\x1b` below U+0100, else `\\u202e` (lower-case hex, as Python writes
    them)."""
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def escape_controls(text: str, *, newlines: bool = False) -> str:
    """`text` ready for a terminal: every `UNSAFE` character as its visible escape (`escape_char`), tabs kept and,
    with `newlines`, `\\n` too (a text of several lines where the caller means them). An escape sequence's
    introducer is escaped, so its parameters show as plain text (`\\x1b[2J`). Idempotent; pure."""
    if newlines:
        return UNSAFE.sub(lambda m: m[0] if m[0] == "\n" else escape_char(m[0]), text)
    return UNSAFE.sub(lambda m: escape_char(m[0]), text)


def clean_name(text: str) -> str:
    """An outside name (a file path, a `--source`) as one safe line that still tells it from every other name:
    a backslash is written `\\\\` and every `UNSAFE` character (line breaks included) as its escape. Text with
    neither comes back unchanged. Pure."""
    if "\\" not in text and not UNSAFE.search(text):
        return text
    return re.sub(r"\\|" + UNSAFE.pattern, lambda m: "\\\\" if m[0] == "\\" else escape_char(m[0]), text)


def strip_controls(text: str) -> str:
    """Memory content without terminal controls: escape sequences removed whole (colours, titles, OSC 52), every
    line break written `\\n` (CR LF, CR, U+2028, U+2029, NEL), then every other `UNSAFE` character but tab and
    `\\n` dropped. Pure."""
    text = _LINE_BREAK.sub("\n", _ESCAPE_SEQUENCE.sub("", text))
    return UNSAFE.sub(lambda m: m[0] if m[0] in "\t\n" else "", text)


def has_text(text: str) -> bool:
    """True when `text` holds something to read: a character that is not whitespace, a control, a format character
    (bidi controls, U+FEFF, zero-width spaces and joiners alone) or a lone surrogate. `"\u202e\x00\ufeff"` is as
    blank as `"   "` (a breaker run saw the one searched and the other refused). Pure."""
    return any(not ch.isspace() and unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Cn") for ch in text)


def json_text(value: object) -> str:
    """`value` as one line of JSON (`json.dumps(..., ensure_ascii=False)`: readable UTF-8) in which every `UNSAFE`
    character is a `\\uXXXX` escape, so the line is safe on a terminal, encodes as UTF-8 even with a lone
    surrogate inside, and still decodes to the same value. Raises `TypeError`/`ValueError` as `json.dumps`."""
    return UNSAFE.sub(lambda m: f"\\u{ord(m[0]):04x}", json.dumps(value, ensure_ascii=False))


def encodable(text: str) -> str:
    """`text` with lone surrogates replaced by U+FFFD (a tokenizer's Rust strings cannot hold them); valid pairs
    are joined. Pure."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
