"""Secrets recognised by their own structure, with a checksum where the format has one: BIP-39 seed phrases and
Base58Check-encoded cryptocurrency private keys (WIF, BIP-32 extended private keys).

`twin.text.sensitivity.find_secrets` runs these beside its regex rules. A checksum makes a finding safe without any
label: a run of 12 BIP-39 words passes its 4-bit checksum by chance once in 16, and prose almost never holds 12
list words in a row (the lists leave out "the", "and", "is", "my", …); a WIF or an extended key passes its
32-bit double-SHA-256 checksum by chance once in four billion. The wordlists come from `mnemonic` (Trezor's
reference implementation of BIP-39), the Base58Check codec from `base58`; both are read only when first needed.
Pure functions; linear in the text length.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections.abc import Iterator
from typing import NamedTuple

import base58

SEED_LENGTHS = (24, 21, 18, 15, 12)
"""Word counts of a BIP-39 phrase (128..256 bits of entropy plus a checksum of 4..8 bits), longest tried first."""
SEED_LANGUAGES = ("english", "french", "spanish", "italian", "portuguese", "czech", "russian", "turkish",
                  "japanese", "korean", "chinese_simplified", "chinese_traditional")
"""The wordlists `mnemonic` ships: every BIP-39 language."""
MAX_SEED_GAP = 12
"""Most characters between two words of one phrase: a comma, a newline, a list number ("11. ", "#12 ")."""
SEED_LABEL_WINDOW = 80
"""Characters before a run of list words searched for a seed-phrase label (a phrase whose checksum fails: a typo,
an Electrum seed, a list read from a wallet's paper backup)."""


class Found(NamedTuple):
    """One secret value: ``text[start:end]``, of ``kind`` (same shape as `twin.text.sensitivity.Secret`)."""

    kind: str
    start: int
    end: int


_LATIN_MARKS = re.compile(r"[\u0300-\u036f]")  # accents; the Japanese voicing marks (U+3099, U+309A) stay


def _fold(word: str) -> str:
    """A word as it is compared with the lists: NFKD, accents dropped, case-folded (BIP-39: the Spanish and French
    lists hold no two words that differ only by accents, so wallets accept them typed without)."""
    if word.isascii():
        return word.lower()
    return _LATIN_MARKS.sub("", unicodedata.normalize("NFKD", word)).casefold()


@functools.lru_cache(maxsize=1)
def _wordlists() -> dict[str, dict[str, int]]:
    """`{folded word: {language: index}}` over every BIP-39 list (read once, on first use)."""
    from mnemonic import Mnemonic

    words: dict[str, dict[str, int]] = {}
    for language in SEED_LANGUAGES:
        for index, word in enumerate(Mnemonic(language).wordlist):
            words.setdefault(_fold(word), {})[language] = index
    return words


def bip39_checksum_ok(indices: list[int]) -> bool:
    """Whether the 11-bit word indices of a 12..24-word phrase carry a valid BIP-39 checksum: the first
    `len/3` bits of SHA-256 of the entropy bits (BIP-39, "Generating the mnemonic")."""
    if len(indices) not in SEED_LENGTHS:
        return False
    bits = 0
    for index in indices:
        bits = (bits << 11) | index
    checksum_bits = len(indices) * 11 // 33
    entropy = (bits >> checksum_bits).to_bytes(checksum_bits * 4, "big")
    return hashlib.sha256(entropy).digest()[0] >> (8 - checksum_bits) == bits & ((1 << checksum_bits) - 1)


_LETTERS = re.compile(r"(?:[^\W\d_]|[\u0300-\u036f\u3099\u309a])+")  # a word, decomposed accents included
_GAP = re.compile(r"[\s,;:.·•|/()#\d-]*")  # fullmatch: what may stand between two words of a phrase
_SEED_LABEL = re.compile(
    r"(?i)\b(?:(?:seed|recovery|backup|mnemonic|wallet|secret)[\s-]*(?:phrase|words?|sentence)|mnemonic|seed)\b"
    r"|wiederherstellungs(?:phrase|wörter)|frase\s+(?:semilla|de\s+recuperaci[óo]n|di\s+recupero|secreta)"
    r"|palabras\s+de\s+recuperaci[óo]n|phrase\s+(?:de\s+r[ée]cup[ée]ration|secr[èe]te)|mots\s+de\s+r[ée]cup[ée]ration"
    r"|frase-semente|palavras(?:-semente|\s+de\s+recupera[çc][ãa]o)|parole\s+di\s+recupero|herstel(?:zin|woorden)"
    r"|сид[\s-]?фраз|мнемоническ|фраз[аыу]\s+восстановлени|助记词|助記詞|恢复短语|シードフレーズ|リカバリーフレーズ|復元フレーズ")


class _Word(NamedTuple):
    start: int
    end: int
    languages: dict[str, int]


def _runs(text: str) -> Iterator[list[_Word]]:
    """Maximal runs of 12+ consecutive list words sharing a language, with at most `MAX_SEED_GAP` separator
    characters between two of them (Chinese words are single characters written apart, so Chinese prose,
    written without spaces, never forms a run). The words are looked up first and only stretches of 12+ list
    words are read closely: prose costs one dictionary lookup per word."""
    lists = _wordlists()
    matches = list(_LETTERS.finditer(text))
    found = [lists.get(_fold(m.group())) if len(m.group()) <= 16 else None for m in matches]
    i, n = 0, len(found)
    while i < n:
        if found[i] is None:
            i += 1
            continue
        j = i
        while j < n and found[j] is not None:
            j += 1
        if j - i >= SEED_LENGTHS[-1]:
            yield from _split_run([_Word(m.start(), m.end(), f) for m, f in zip(matches[i:j], found[i:j],
                                                                             strict=True)], text)
        i = j


def _split_run(words: list[_Word], text: str) -> Iterator[list[_Word]]:
    """`words` (consecutive list words) cut where a gap is too long or not a separator, or the languages part."""
    run: list[_Word] = []
    shared: set[str] = set()
    for word in (*words, None):
        if word is not None and run and (word.start - run[-1].end <= MAX_SEED_GAP
                                         and _GAP.fullmatch(text, run[-1].end, word.start)
                                         and not _BLANK_LINE.search(text, run[-1].end, word.start)
                                         and (common := shared & word.languages.keys())):
            run.append(word)
            shared = common
            continue
        if len(run) >= SEED_LENGTHS[-1]:
            yield run
        run, shared = ([word], set(word.languages)) if word is not None else ([], set())


def _without_prose_tail(words: list[_Word], text: str) -> list[_Word]:
    """`words` without those on a later line than the first word's when that line goes on with other words after
    the last one ("…indoor loud" then "Owner renewed the domain in March." on the next line: "Owner" is a list
    word that opens a sentence, not the phrase's 13th word)."""
    if not words:
        return words
    line_end = text.find("\n", words[-1].end, words[-1].end + 201)
    tail = text[words[-1].end:line_end if line_end >= 0 else words[-1].end + 201]
    line_start = text.rfind("\n", words[0].end, words[-1].start) + 1
    if not line_start or not any(c.isalpha() for c in tail):
        return words
    return [w for w in words if w.start < line_start]


def _checksum_holds(run: list[_Word]) -> bool:
    """Whether `run` is a whole BIP-39 phrase (a valid length, the checksum holding in one of its languages)."""
    languages = set.intersection(*(set(w.languages) for w in run))
    return len(run) in SEED_LENGTHS and any(bip39_checksum_ok([w.languages[lang] for w in run])
                                            for lang in languages)


_BLANK_LINE = re.compile(r"\n[ \t]*\n")  # no phrase crosses a blank line (a new paragraph)
_LINE_START = re.compile(r"[\n:：\"'“‘«(\[]")  # what may open the line or clause a phrase stands alone in


def _stands_alone(text: str, start: int, end: int) -> bool:
    """No letter between the line start (or a ":" or an opening quote) and `start`, nor between `end` and the
    line end: the phrase is all its line says ("witch collapse … least", "Seed: witch …", "1. witch 2. …")."""
    head_from = max(0, start - 200)
    opener = max((m.end() for m in _LINE_START.finditer(text, head_from, start)), default=head_from)
    if opener == head_from and head_from > 0:
        return False  # no line start within 200 characters: inside a long paragraph
    line_end = text.find("\n", end, end + 201)
    tail = text[end:line_end if line_end >= 0 else end + 201]
    return not any(c.isalpha() for c in text[opener:start]) and not any(c.isalpha() for c in tail)


def seed_phrases(text: str) -> Iterator[Found]:
    """BIP-39 seed phrases in `text`: 12/15/18/21/24 words of one BIP-39 list (any of its languages; case and
    accents ignored) separated by spaces, commas, newlines or list numbers ("1. witch 2. collapse …").

    Found when a seed-phrase label ("seed phrase", "recovery words", "Wiederherstellungsphrase", "frase semilla",
    "助记词", …) ends in the `SEED_LABEL_WINDOW` characters before the run of list words (the label's own list
    words, "seed", "phrase", are left out): then the whole run of 12..24 words, checksum or not (a typo, an
    Electrum seed); or when the run is a whole phrase whose checksum holds and it stands alone on its line or
    after a colon (`_stands_alone`). A shopping list inside a sentence ("Owner will buy milk, cheese, apple, …")
    passes the 4-bit checksum of 12 words once in 16, and is not reported. Each finding spans the first to the
    last word."""
    for run in _runs(text):
        labels = list(_SEED_LABEL.finditer(text, max(0, run[0].start - SEED_LABEL_WINDOW),
                                           run[min(3, len(run) - 1)].end))
        # the last label that leaves 12..24 words: a phrase's own word "seed" is no label of the words after it
        labelled = (_without_prose_tail([w for w in run if w.start >= label.end()], text) for label in reversed(labels))
        words = next((ws for ws in labelled if SEED_LENGTHS[-1] <= len(ws) <= SEED_LENGTHS[0]), None)
        if words:
            yield Found("seed_phrase", words[0].start, words[-1].end)
            continue
        if len(run) > SEED_LENGTHS[-1]:
            run = _without_prose_tail(run, text) or run
        if _checksum_holds(run) and _stands_alone(text, run[0].start, run[-1].end):
            yield Found("seed_phrase", run[0].start, run[-1].end)


_B58 = "1-9A-HJ-NP-Za-km-z"
_WIF = re.compile(rf"(?<![{_B58}])[5KLc9][{_B58}]{{50,51}}(?![{_B58}])")
_EXTENDED = re.compile(rf"(?<![{_B58}])[xtyzuvYZUV]prv[{_B58}]{{104,108}}(?![{_B58}])")


def _payload(token: str) -> bytes | None:
    try:
        return base58.b58decode_check(token)
    except ValueError:
        return None


def crypto_private_keys(text: str) -> Iterator[Found]:
    """Base58Check private keys whose checksum holds: WIF (version byte 0x80 mainnet or 0xEF testnet, a 32-byte
    key, optionally the 0x01 compression flag: 51-52 characters starting 5/K/L or 9/c) and BIP-32 extended
    private keys (`xprv`, `tprv`, `yprv`, `zprv`, … : 78 bytes). Addresses and extended *public* keys (`xpub`)
    are public and never match."""
    for match in _WIF.finditer(text):
        payload = _payload(match.group())
        if payload and payload[0] in (0x80, 0xEF) and (len(payload) == 33 or (len(payload) == 34
                                                                               and payload[-1] == 1)):
            yield Found("crypto_private_key", match.start(), match.end())
    for match in _EXTENDED.finditer(text):
        payload = _payload(match.group())
        if payload is not None and len(payload) == 78:
            yield Found("crypto_private_key", match.start(), match.end())


def structural_secrets(text: str) -> Iterator[Found]:
    """Every finding of `seed_phrases` and `crypto_private_keys`, in that order (not sorted)."""
    if len(text) >= 51:
        yield from crypto_private_keys(text)
    yield from seed_phrases(text)


def is_list_word(word: str) -> bool:
    """Whether `word` (case and accents ignored) is in any BIP-39 wordlist: 2048 common words of each of 12
    languages, used as a small dictionary (an app password's letter groups are not words)."""
    return _fold(word) in _wordlists()
