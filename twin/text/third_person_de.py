"""German first person -> "Owner" (seed 000's third-person sentence, in German: no translation).

"Ich bin Vegetarier." -> "Owner ist Vegetarier."; "Seit 2019 wohne ich in Köln." -> "Seit 2019 wohnt Owner in
Köln."; "…, weil ich dort arbeite." -> "…, weil Owner dort arbeitet."; "meine Schwester" -> "Owners Schwester"
(the prenominal genitive of a name, whatever the case); "mir"/"mich"/"uns" -> "sich" after the owner's own verb,
else "Owner". "wir" is the owner too, as in English ("Wir wohnen in Bonn." -> "Owner wohnt in Bonn."). The verb
takes the third-person singular: a table of irregular and strong verbs, else the regular ending (-e -> -t,
-et after a t/d stem; -en -> -t). Past forms are the same in the first and third person and stay. Rules ours;
tests/test_third_person.py. Pure, linear in the sentence.
"""

from __future__ import annotations

import re

__all__ = ["looks_german", "rewrite", "third_singular"]

_HINTS = frozenset(
    "ich mich mir mein meine meinen meinem meiner meines wir uns unser unsere unseren unserem und der die das ist"
    " nicht bin habe hab mit ein eine einen auf für seit zu auch sehr gern gerne nach wohne arbeite heiße mag den"
    " dem im vom zum zur kein keine aber oder weil dass wenn schon noch jetzt heute gestern morgen letzte letzten"
    " nächste woche jahr jahren immer nie oft sind haben war hatte bei aus von sich".split())
_FIRST_PERSON = re.compile(r"(?i)(?<![\w'’-])(?:ich|mich|mir|mein(?:e[nmrs]?)?|wir|uns|unser(?:e[nmrs]?)?)(?![\w'’-])")
_TOKEN = re.compile(r"[a-zäöüß]+")
_IRREGULAR = {  # first person singular -> third person singular
    "bin": "ist", "habe": "hat", "hab": "hat", "werde": "wird", "weiß": "weiß", "kann": "kann", "will": "will",
    "muss": "muss", "darf": "darf", "soll": "soll", "mag": "mag", "möchte": "möchte", "würde": "würde",
    "wäre": "wäre", "hätte": "hätte", "könnte": "könnte", "sollte": "sollte", "müsste": "müsste", "wurde": "wurde",
    "fahre": "fährt", "laufe": "läuft", "schlafe": "schläft", "esse": "isst", "lese": "liest", "sehe": "sieht",
    "spreche": "spricht", "nehme": "nimmt", "gebe": "gibt", "helfe": "hilft", "treffe": "trifft",
    "vergesse": "vergisst", "trage": "trägt", "halte": "hält", "lasse": "lässt", "falle": "fällt",
    "wasche": "wäscht", "empfehle": "empfiehlt", "werfe": "wirft", "brate": "brät", "lade": "lädt", "rate": "rät",
    "trete": "tritt", "sterbe": "stirbt", "breche": "bricht", "messe": "misst", "fange": "fängt",
    "gefalle": "gefällt", "verlasse": "verlässt", "erhalte": "erhält", "behalte": "behält", "backe": "backt",
    "tue": "tut", "tu": "tut", "weiss": "weiss", "lerne": "lernt", "wachse": "wächst", "verbiete": "verbietet",
}
_PLURAL = {  # first person plural -> third person singular
    "sind": "ist", "haben": "hat", "werden": "wird", "wissen": "weiß", "können": "kann", "wollen": "will",
    "müssen": "muss", "dürfen": "darf", "sollen": "soll", "mögen": "mag", "möchten": "möchte", "waren": "war",
    "hatten": "hatte", "wurden": "wurde", "würden": "würde", "wären": "wäre", "hätten": "hätte", "tun": "tut",
    "fahren": "fährt", "laufen": "läuft", "schlafen": "schläft", "essen": "isst", "lesen": "liest",
    "sehen": "sieht", "sprechen": "spricht", "nehmen": "nimmt", "geben": "gibt", "helfen": "hilft",
    "treffen": "trifft", "vergessen": "vergisst", "tragen": "trägt", "halten": "hält", "lassen": "lässt",
    "fallen": "fällt", "waschen": "wäscht", "konnten": "konnte", "wollten": "wollte", "mussten": "musste",
}
_T_STEM_PRESENT = ("arbeite", "warte", "starte", "antworte", "richte", "achte", "fürchte", "beobachte",
                   "betrachte", "teste", "koste", "faste", "huste", "gestalte", "verwalte", "schalte", "bitte",
                   "rette", "wette", "miete", "biete", "leite", "streite", "reite", "bereite", "begleite",
                   "heirate", "unterrichte", "berichte", "erwarte", "atme", "rechne", "öffne", "zeichne", "ordne",
                   "regne", "trockne", "leiste", "rüste", "mäste", "töte", "falte", "spalte", "rate")
"""First-person present forms ending in -te or in a consonant before -e that takes -et ("arbeite" -> "arbeitet");
every other form in -te is a past tense ("wohnte"), the same in the third person."""
_NOT_VERBS = frozenset(
    "die eine keine meine deine seine ihre unsere eure diese jede welche alle beide viele einige manche solche"
    " gerne heute ohne gerade ganze nette kleine große alte neue liebe gute schöne lange eigene andere erste"
    " letzte nächste jene wie wenn dass weil ob obwohl da als bevor nachdem seit während damit sodass wo was"
    " der das den dem des und oder aber denn sondern doch also dann jetzt nun hier dort so sehr auch noch schon"
    " nicht nie immer oft bald morgen gestern ende müde leise böse weise träge lose blöde feige rege".split())
_SUBORDINATORS = frozenset(
    "weil dass wenn ob obwohl da als bevor nachdem seit seitdem während damit sodass wo was wie falls sobald"
    " solange bis der die das den dem welche welcher welches ehe indem".split())
_PREPOSITIONS = frozenset(
    "für mit bei zu von an auf über ohne gegen um nach aus vor hinter neben zwischen unter durch außer gegenüber"
    " trotz wegen statt".split())
_CLAUSE_END = re.compile(r"[,;:.!?]|\s(?:und|oder|aber)\s")


_ENGLISH = frozenset("the and is are was my i i'm you he she it they with to of for have has this that".split())


def looks_german(sentence: str) -> bool:
    """True when `sentence` holds a German first-person word (ich, mir, mein…, wir, uns…: none is an English or
    French word) and more German hint words than English ones ("Meine Schwester wohnt in Hamburg.", not "Mir
    is the name of my boat.")."""
    if _FIRST_PERSON.search(sentence) is None:
        return False
    words = sentence.lower().replace("’", "'").split()
    german = sum(word.strip(".,!?;:") in _HINTS for word in words)
    return german > sum(word.strip(".,!?;:") in _ENGLISH for word in words)


def third_singular(verb: str, plural: bool = False) -> str | None:
    """The third-person singular of a German first-person verb form (`plural`: a "wir" form), or None when
    `verb` does not look like one (an adverb, a noun): "bin" -> "ist", "wohne" -> "wohnt", "arbeite" ->
    "arbeitet", "fahre" -> "fährt", "wohnten" -> "wohnte", "wandern" -> "wandert"."""
    low = verb.lower()
    if low in _NOT_VERBS:
        return None
    table = _PLURAL if plural else _IRREGULAR
    if low in table:
        out = table[low]
    elif plural:
        out = _plural_to_singular(low)
    elif low.endswith(_T_STEM_PRESENT) or low.endswith("de"):
        out = low[:-1] + "et"  # arbeite -> arbeitet, atme -> atmet, finde -> findet
    elif low.endswith("te"):
        return verb  # a past tense (wohnte): the same in the third person
    elif low.endswith("e") and len(low) >= 3:
        out = low[:-1] + "t"  # wohne -> wohnt, heiße -> heißt, tanze -> tanzt
    else:
        return None
    if out is None:
        return None
    return out.capitalize() if verb[:1].isupper() else out


def _plural_to_singular(low: str) -> str | None:
    """A regular "wir" form -> the third person singular: wohnen -> wohnt, arbeiten -> arbeitet, wohnten ->
    wohnte, wandern -> wandert; None when `low` is no such form."""
    if low.endswith("ten") and not low[:-1].endswith(_T_STEM_PRESENT):
        return low[:-1]
    if low.endswith(("ern", "eln")):
        return low[:-1] + "t"
    if low.endswith("en") and len(low) > 3:
        stem = low[:-2]
        return stem + ("et" if stem.endswith(("t", "d")) or low[:-1].endswith(_T_STEM_PRESENT) else "t")
    return None


_WORDS = re.compile(r"[\wäöüÄÖÜß]+|[^\w\s]|\s+")


def rewrite(sentence: str) -> str:
    """`sentence` with the German first person as "Owner" (see the module docstring); words the rules do not
    know stay as written."""
    tokens = _WORDS.findall(sentence)
    words = [i for i, t in enumerate(tokens) if t.strip() and (t[0].isalnum() or t[0] == "_")]
    own_clause = False
    for n, i in enumerate(words):
        low = tokens[i].lower()
        if low in ("ich", "wir"):
            plural = low == "wir"
            tokens[i] = "Owner"
            own_clause = True
            before = words[n - 1] if n else None
            after = words[n + 1] if n + 1 < len(words) else None
            if (before is not None and _adjacent(tokens, before, i) and _verb_slot(tokens, before, n - 1 == 0)
                    and (new := third_singular(tokens[before], plural)) is not None):
                tokens[before] = new
                continue
            if after is not None and (new := third_singular(tokens[after], plural)) is not None and not (
                    before is not None and tokens[before].lower() in _SUBORDINATORS):
                tokens[after] = new
                continue
            _conjugate_clause_end(tokens, words, n, plural)
        elif low in ("und", "aber", "oder") and own_clause and n + 1 < len(words):
            following = tokens[words[n + 1]]  # "Ich heiße Jonas und arbeite…": a verb of the owner's clause
            if following[:1].islower() and (new := third_singular(following)) is not None and new != following:
                tokens[words[n + 1]] = new
        elif low.startswith("mein") or low.startswith("unser"):
            if low in ("mein", "meine", "meinen", "meinem", "meiner", "meines", "unser", "unsere", "unseren",
                       "unserem", "unserer", "unseres"):
                tokens[i] = "Owners"
        elif low in ("mir", "mich", "uns"):
            previous = tokens[words[n - 1]].lower() if n else ""
            tokens[i] = "sich" if own_clause and previous not in _PREPOSITIONS else "Owner"
    return "".join(tokens)


def _adjacent(tokens: list[str], a: int, b: int) -> bool:
    """True when only blanks stand between tokens `a` and `b`."""
    return all(not t.strip() for t in tokens[a + 1:b])


def _verb_slot(tokens: list[str], i: int, first: bool) -> bool:
    """True when the word at `i`, right before "ich", may be the finite verb of an inverted clause ("Seit 2019
    wohne ich…"): lower case (a noun is capitalised) unless it opens the sentence, and no subordinator."""
    word = tokens[i]
    return (word[:1].islower() or first) and word.lower() not in _SUBORDINATORS


def _conjugate_clause_end(tokens: list[str], words: list[int], n: int, plural: bool) -> None:
    """In a subordinate clause ("…, weil ich dort arbeite."), the finite verb ends the clause: conjugate the last
    word before the next comma, "und"/"oder"/"aber" or end of sentence."""
    last = None
    for i in words[n + 1:]:
        between = "".join(tokens[(last or words[n]) + 1:i])
        if _CLAUSE_END.search(" " + between + " ") and last is not None:
            break
        last = i
    if last is not None and (new := third_singular(tokens[last], plural)) is not None:
        tokens[last] = new
