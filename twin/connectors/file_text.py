"""The pure `to_text` part of the files connector (STYLE.md 3: fetch / to_text / push): the bytes of one file ->
`Document` (text to learn, title) or `Skip` (reason). No I/O: `twin.connectors.files` reads the bytes and passes
its bounds; tests call it with fixture bytes.

Kinds by suffix (`.gz` meaning gzip-compressed text, decompressed in a bounded way; a `README.<anything>`
is sniffed like an extensionless file); encodings UTF-8 or UTF-16 with a BOM, else UTF-8, with a few bad bytes
replaced by U+FFFD (`BAD_BYTES_PER_KB`) rather than losing the file; HTML through the stdlib parser; titles from
the first markdown, rst, org or LaTeX heading or the HTML <title>.
"""

from __future__ import annotations

import codecs
import itertools
import json
import os
import re
import zlib
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from twin.outside_text import strip_controls
from twin.settings import Settings
from twin.text.secret_fields import key_words, names_secret

KINDS_BY_SUFFIX = {".md": "markdown", ".markdown": "markdown", ".txt": "markdown", "": "sniff", ".rst": "rst",
                   ".org": "org", ".html": "html", ".htm": "html", ".tex": "tex", ".csv": "data", ".json": "data",
                   ".log": "data"}
"""Text-like files by suffix (after a `.gz`); `""` (README, NEWS) is read only if it sniffs as text. The
kind picks the title rule (`markdown` also serves `.txt` and extensionless files). Other suffixes are ignored."""
DEFAULT_MAX_BYTES: int = Settings.model_fields["files_max_bytes"].default
"""`to_text`'s bound when called without one: the setting's default (bytes, uncompressed)."""
SNIFF_BYTES = 8192
"""Bytes examined for NULs (binary) and, for extensionless files, for valid UTF-8."""
TITLE_MAX_CHARS = 200
"""Longest title kept for a document's memories (characters)."""
BAD_BYTES_PER_KB = 10
"""Invalid UTF-8 sequences a text may hold, per 1024 bytes (and at least 1), and still be read as UTF-8 with
U+FFFD in their place (ours: one stray byte in a note is damage, one in every few words is another encoding,
such as Latin-1, which is then "undecodable")."""
_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


@dataclass(frozen=True)
class Document:
    """The text to learn from one file and the title its memories keep as context."""

    text: str
    title: str


@dataclass(frozen=True)
class Skip:
    """Why a file is not learned. `report=False` means "not a text file after all" (empty, or an extensionless
    file that is not UTF-8 text): ignored silently, with no activity line and no manifest row."""

    reason: str
    report: bool = True


def text_kind(path: Path) -> str | None:
    """The kind of a text-like file name (see `KINDS_BY_SUFFIX`; `README.Debian`, `README.source`: "sniff"), or
    None for a name the connector ignores."""
    name = path.name.lower().removesuffix(".gz")
    if not name or name.startswith("."):
        return None
    kind = KINDS_BY_SUFFIX.get(os.path.splitext(name)[1])
    return "sniff" if kind is None and name.startswith("readme.") else kind


def lenient_utf8(raw: bytes, final: bool = True) -> str | None:
    """`raw` as UTF-8 with each invalid sequence replaced by U+FFFD when there are at most `BAD_BYTES_PER_KB` of
    them per KB (at least 1), else None. `final=False`: a character cut at the end is not counted (a file's
    head). Pure."""
    text = codecs.getincrementaldecoder("utf-8")("replace").decode(raw, final=final)
    bad = text.count("\ufffd") - raw.count(b"\xef\xbf\xbd")
    return text if bad <= max(1, len(raw) * BAD_BYTES_PER_KB // 1024) else None


def sniffs_as_text(head: bytes) -> bool:
    """True when `head` (the first bytes of a file) has no NUL byte and is UTF-8 (a cut last character is allowed,
    a few bad bytes too: `lenient_utf8`): the rule for extensionless files such as README."""
    if b"\x00" in head[:SNIFF_BYTES]:
        return False
    return lenient_utf8(head[:SNIFF_BYTES], final=False) is not None


def gunzip_bounded(raw: bytes, max_bytes: int) -> bytes | Skip:
    """Decompress gzip `raw` (every member) without ever holding more than `max_bytes` + 1 bytes of output,
    so a gzip bomb costs at most that much memory. Returns `Skip("too large")` past the limit and
    `Skip("corrupt gzip")` for bytes that are not a complete gzip stream."""
    out = bytearray()
    data = raw
    while data:
        decomp = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            out += decomp.decompress(data, max_bytes + 1 - len(out))
        except zlib.error:
            return Skip("corrupt gzip")
        if len(out) > max_bytes:
            return Skip("too large")
        if not decomp.eof:
            return Skip("corrupt gzip")
        data = decomp.unused_data
        if not data.strip(b"\x00"):  # trailing padding after the last member
            break
    return bytes(out)


_DECLARED_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?([A-Za-z0-9_.:-]{1,40})""", re.IGNORECASE)


def declared_charset(raw: bytes) -> str | None:
    """The codec an HTML file declares in a `<meta … charset=…>` within its first 4 KB, if Python knows it."""
    match = _DECLARED_CHARSET.search(raw[:4096])
    if not match:
        return None
    try:
        return codecs.lookup(match.group(1).decode("ascii")).name
    except LookupError:
        return None


def decode_text(raw: bytes, declared: str | None = None) -> str | Skip:
    """Bytes -> str: UTF-8 with BOM, UTF-16 with BOM, else strict UTF-8, else the `declared` codec (an HTML
    file's meta charset, e.g. ISO-8859-1), else UTF-8 with a few bad bytes replaced (`lenient_utf8`).
    `Skip("binary")` when NUL bytes appear (in the first 8 KB or after decoding), `Skip("undecodable")` when none
    of these decodes it."""
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            try:
                text = raw[len(bom):].decode("utf-8") if codec == "utf-8" else raw.decode(codec)
            except UnicodeDecodeError:
                return Skip("undecodable")
            break
    else:
        if b"\x00" in raw[:SNIFF_BYTES]:
            return Skip("binary")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            try:
                if not declared or declared == "utf-8":
                    raise
                text = raw.decode(declared)
            except UnicodeDecodeError:
                lenient = lenient_utf8(raw)
                if lenient is None:
                    return Skip("undecodable")
                text = lenient
    return Skip("binary") if "\x00" in text else text


class _HTMLText(HTMLParser):
    """Collects an HTML page's visible text (script, style and the like dropped), its <title> and first <h1>."""

    HIDDEN = frozenset({"script", "style", "noscript", "template", "svg", "iframe", "object"})
    BLOCKS = frozenset({"p", "div", "br", "li", "ul", "ol", "tr", "td", "th", "table", "section", "article", "header",
                        "footer", "nav", "aside", "main", "pre", "blockquote", "hr", "dt", "dd", "figcaption",
                        "h1", "h2", "h3", "h4", "h5", "h6", "title"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self.h1: list[str] = []
        self._hidden = 0
        self._in: str | None = None  # "title" or "h1" while inside one

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.HIDDEN:
            self._hidden += 1
        elif tag == "title" or (tag == "h1" and not self.h1):
            self._in = tag
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        elif tag == self._in:
            self._in = None
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._hidden:
            return
        if self._in == "title":
            self.title.append(data)
            return
        if self._in == "h1":
            self.h1.append(data)
        self.parts.append(data)


def _squeeze(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def html_to_text(html: str) -> tuple[str, str | None]:
    """`(visible text, title)` of an HTML page with the stdlib parser: one line per block, whitespace collapsed,
    script/style dropped; the title is `<title>`, else the first `<h1>`, else None."""
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    title = _squeeze(" ".join(parser.title)) or _squeeze(" ".join(parser.h1))
    return _squeeze("".join(parser.parts)), title or None


_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_RST_UNDERLINE = re.compile(r"^([=\-~^*#+\"'`:._])\1{2,}\s*$")
_ORG_TITLE = re.compile(r"^#\+title:[ \t]*(.+)$", re.IGNORECASE | re.MULTILINE)
_ORG_HEADING = re.compile(r"^\*+[ \t]+(.+)$", re.MULTILINE)
_TEX_TITLE = re.compile(r"\\(?:title|chapter|section)\*?\{([^{}\n]+)\}")
_FRONT_TITLE = re.compile(r"^title:[ \t]*[\"']?(.+?)[\"']?[ \t]*$", re.MULTILINE)


def _markdown_title(text: str) -> str | None:
    lines = text.split("\n")
    if lines and lines[0].strip() == "---":  # YAML front matter
        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() in ("---", "...")), None)
        if end is not None:
            match = _FRONT_TITLE.search("\n".join(lines[1:end]))
            if match:
                return match.group(1)
            lines = lines[end + 1:]
    for i, line in enumerate(lines):
        if match := _ATX.match(line):
            return match.group(1)
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and not line.startswith("    ") and _UNDERLINE.match(nxt) and not _UNDERLINE.match(line):
            return line.strip()
    return None


def _rst_title(text: str) -> str | None:
    lines = text.split("\n")
    for line, nxt in itertools.pairwise(lines):
        title = line.strip()
        if title and not _RST_UNDERLINE.match(line) and _RST_UNDERLINE.match(nxt) and len(nxt.strip()) >= len(title):
            return title
    return None


def _heading(kind: str, text: str) -> str | None:
    if kind in ("markdown", "sniff"):
        return _markdown_title(text)
    if kind == "rst":
        return _rst_title(text)
    if kind == "org":
        match = _ORG_TITLE.search(text) or _ORG_HEADING.search(text)
        return match.group(1) if match else None
    if kind == "tex":
        match = _TEX_TITLE.search(text)
        return match.group(1) if match else None
    return None


def json_strings(text: str) -> str:
    """The prose inside a JSON document: its string values of 12 characters or more, one per line, in document
    order (keys, numbers and short codes are no memories); a value under a key that names a secret
    (`twin.text.secret_fields.names_secret`: "password", "api_key", "pin") is kept whatever its length, as "<key words>:
    <value>" ("password: Sup3rS3cret!"), so the memory says what it is and is sensitive. Text that is not JSON is
    returned unchanged."""
    try:
        data = json.loads(text)
    except ValueError:
        return text
    found: list[str] = []
    stack: list[tuple[str | None, object]] = [(None, data)]
    while stack:
        key, item = stack.pop()
        if isinstance(item, (str, int)) and not isinstance(item, bool) and key and names_secret(key):
            found.append(f"{key_words(key)}: {item}")
        elif isinstance(item, str):
            if len(item.strip()) >= 12:
                found.append(" ".join(item.split()))
        elif isinstance(item, dict):
            stack.extend(reversed([(str(k), v) for k, v in item.items()]))
        elif isinstance(item, list):
            stack.extend(reversed([(key, v) for v in item]))
    return "\n".join(found)


def to_text(path: Path, raw: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES, fallback_title: str | None = None
            ) -> Document | Skip:
    """Turn the bytes of one file into the text to learn; pure (no I/O).

    `path` decides the kind (by suffix, `.gz` meaning gzip-compressed text); `raw` are the bytes on disk;
    `max_bytes` bounds the text in bytes, uncompressed (gzip is decompressed in a bounded way); the title is
    `fallback_title` (else the file name without `.gz`) followed by the first markdown/rst/org/LaTeX heading
    or HTML <title> in parentheses, so each memory says which file it is from and what the file is about
    (terminal controls, line breaks and bidi overrides dropped from both: `twin.outside_text.strip_controls`).
    Returns `Skip` with reason "binary", "too large", "undecodable" or "corrupt gzip", or a silent `Skip`
    (report=False: counted, no diary line of its own) "empty", "not a text file" (an unknown suffix) or "binary"
    (an extensionless file that is not text).
    """
    kind = text_kind(path)
    if kind is None:
        return Skip("not a text file", report=False)
    if path.name.lower().endswith(".gz"):
        data = gunzip_bounded(raw, max_bytes)
        if isinstance(data, Skip):
            return data
        raw = data
    if len(raw) > max_bytes:
        return Skip("too large")
    if kind == "sniff" and not sniffs_as_text(raw):
        return Skip("binary", report=False)
    # HTML that is not UTF-8 is read in its declared charset, else windows-1252 (what browsers assume)
    text = decode_text(raw, (declared_charset(raw) or "cp1252") if kind == "html" else None)
    if isinstance(text, Skip):
        return Skip(text.reason, report=kind != "sniff")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    title = None
    if path.name.lower().removesuffix(".gz").endswith(".json"):
        text = json_strings(text)
    if kind == "html":
        text, title = html_to_text(text)
    else:
        title = _heading(kind, text)
    text = text.strip()
    if not text:
        return Skip("empty", report=False)
    name = path.name[:-3] if path.name.lower().endswith(".gz") else path.name
    # the title is memory text: a name's or heading's escape sequences, line breaks and bidi overrides go
    label = " ".join(strip_controls(fallback_title or name).split())
    heading = " ".join(strip_controls(title or "").split())
    if heading and heading.casefold() not in label.casefold():
        label = f"{label} ({heading})"  # "bash/README (Introduction)": where it is, and what it is about
    return Document(text, " ".join(label.split())[:TITLE_MAX_CHARS])
