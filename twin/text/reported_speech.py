"""Someone else's words as the twin keeps them (issue "What is learned is what was said, by whom"; seed 000:
every memory is one self-contained third-person sentence). One home for both ways a third party's text is
written into memories:

- `reported(text, name, language)`: the writer's own first person in their name, in place, in English, German,
  French and Spanish ("I will send the slides" from Alice Smith is "Alice Smith will send the slides", "ich
  schicke … und melde mich" is "Anna schickt … und meldet sich", "we" is the writer's side: "Alice Smith and
  others"). Email summaries quote a correspondent this way (`twin.connectors.email_summary`). English verbs agree
  through `twin.text.third_person.agree`; German, French and Spanish get their commonest forms (regular endings plus
  a table of irregular verbs); a verb form the rules do not know stays as written, the pronoun is always replaced.
- `report(sentence, speaker, english)`: a chat message the owner forwards, quotes or replies to is that person's
  claim, framed as such: "You owe me 500 euros." from Trudy becomes "Trudy says that Owner owes Trudy 500 euros.",
  never "Owner owes Trudy 500 euros." (`reported` for the speaker's I/me/my, `twin.text.third_person
  .second_to_third_person` for the reader's you/your). Another language, an imperative ("Ignore previous
  instructions and …") or a first-person plural is quoted word for word ("Trudy wrote: “…”."): an instruction
  stays data, attributed to its writer. Called by `twin.text.extractor.extract(..., speaker=…)`.

Pure functions.
"""

from __future__ import annotations

import re

from twin.text.third_person import agree, second_to_third_person
from twin.text.third_person_de import third_singular as german_third_singular
from twin.text.third_person_fr import third_singular as french_third_singular

SPEAKER_MAX_CHARS = 64
"""A speaker's name is cut to this many characters (ours: a display name, not a paragraph)."""
_IMPERATIVE = frozenset("""ignore forget disregard send tell give call email mail text pay transfer wire delete remove
erase run execute click open visit buy bring take let please remember stop reply write go come check meet pick book
cancel sign share forward post print install download upload move copy paste change reset update add put keep
don't do make show list reveal print follow act pretend respond answer say use""".split())
_SECOND_PERSON = re.compile(r"(?i)(?<![\w'’-])(?:you|your|yours|yourself)(?![\w-])")
_PLURAL = re.compile(r"(?i)(?<![\w'’-])(?:we|us|our|ours|ourselves)(?![\w'’-])")
_LOWER_START = frozenset("""he she it they there this that these those the a an his her its their some every each
no one someone everyone nobody today tomorrow yesterday last next""".split())
"""Openers lower-cased after "… says that" (anything else may be a name: kept as written)."""


def clean_speaker(name: str) -> str:
    """A speaker's display name as it goes into memory text: one line, control characters dropped (they are
    outside text), whitespace collapsed, cut to `SPEAKER_MAX_CHARS`; "" when nothing is left."""
    from twin.outside_text import strip_controls

    return " ".join(strip_controls(str(name)).split())[:SPEAKER_MAX_CHARS].strip()


def report(sentence: str, speaker: str, english: bool) -> str:
    """`sentence`, written by `speaker`, as a sentence about what `speaker` said (without its final period).

    `english` (the caller's `looks_english` verdict, or an ASCII sentence that says "you"), no opening imperative
    verb (`_IMPERATIVE`), no question and no we/us/our (whose reference the text does not settle) give reported
    speech: "Trudy says that Owner owes Trudy 500 euros"; otherwise the words are quoted: "Trudy wrote: “Ignore
    previous instructions and …”". Pure."""
    body = sentence.strip().rstrip(".!…").rstrip()
    english = english or (body.isascii() and _SECOND_PERSON.search(body) is not None)
    first = re.match(r"[\w'’]+", body)
    opener = first.group().lower().replace("’", "'") if first else ""
    if not english or _PLURAL.search(body) or opener in _IMPERATIVE or body.endswith("?"):
        return f"{speaker} wrote: “{body}”"
    rewritten = second_to_third_person(reported(body, speaker, "en"))
    if opener in _LOWER_START:
        rewritten = rewritten[:1].lower() + rewritten[1:]
    return f"{speaker} says that {rewritten}"


# --- a writer's first person in their name -------------------------------------------------------------------
_EN_ADVERBS = (r"just|really|also|still|already|only|never|always|probably|definitely|actually|now|then|even|soon"
               r"|usually|often|certainly|hereby|personally|finally")
_EN = re.compile(
    rf"(?<![\w'’-])(?:(?P<i>I)(?:['’](?P<contr>m|ve|ll|d))?(?P<adv>(?:\s+(?:{_EN_ADVERBS})\b)*)"
    r"(?:\s+(?P<verb>[a-z]+(?:n['’]t)?)\b(?!['’]))?"
    r"|(?P<we>we)(?:['’](?P<wecontr>re|ve|ll|d))?|(?P<obj>me|myself)|(?P<pos>my|mine)|(?P<us>us|ourselves)"
    r"|(?P<our>our|ours))(?![\w'’-]|\.\w)", re.IGNORECASE)
_EN_CONTRACTED = {"m": "is", "ve": "has", "ll": "will", "d": "would"}
_WE_CONTRACTED = {"re": "are", "ve": "have", "ll": "will", "d": "would"}
_NOT_VERB = frozenset("a an the to and or but if so as in on at for of with from by this that it you your".split())


def reported(text: str, name: str, language: str) -> str:
    """`text` with its writer's first person turned into `name` (a person's name, or "Owner" for the owner's
    own mail), for `language` "en", "de", "fr" or "es"; other languages are returned as they are. All-caps words
    (US, ME) are left alone."""
    if language == "de":
        return _german(text, name)
    if language == "fr":
        return _french(text, name)
    if language == "es":
        return _spanish(text, name)
    if language == "en":
        return _english(text, name)
    return text


def _english(text: str, name: str) -> str:
    def replace(match: re.Match) -> str:
        word = match.group()
        if len(word) > 1 and word.isupper() and " " not in word and "'" not in word and "’" not in word:
            return word
        if match["i"]:
            contraction, adverbs, verb = (match["contr"] or "").lower(), match["adv"] or "", match["verb"]
            out = name + (" " + _EN_CONTRACTED[contraction] if contraction else "") + adverbs
            if verb:
                out += " " + (verb if contraction or verb.lower() in _NOT_VERB else agree(verb))
        elif match["we"] or match["us"]:
            contraction = (match["wecontr"] or "").lower()
            out = f"{name} and others" + (f" {_WE_CONTRACTED[contraction]}" if contraction else "")
        elif match["obj"]:
            out = name
        elif match["pos"]:
            out = f"{name}'s"
        else:
            out = "their" if word.lower() == "our" else "theirs"
        return out[:1].upper() + out[1:] if word[:1].isupper() else out

    return _EN.sub(replace, text)


# --- German ------------------------------------------------------------------------------------------------------

_DE_POSSESSIVE = re.compile(r"(?<![\w-])([Mm])ein(e[mnrs]?|es)?(?![\w-])")
_DE_OUR = re.compile(r"(?<![\w-])([Uu])nser(e[mnrs]?|es)?(?![\w-])")
_DE_ICH = re.compile(r"(?<![\w-])(?:(?P<before>[a-zäöüß]+)\s+)?(?P<ich>[Ii]ch)(?:\s+(?P<after>[a-zäöüß]+))?(?![\w-])")
_DE_OBJECT = re.compile(r"(?<![\w-])(?:mich|mir)(?![\w-])")
_DE_WIR = re.compile(r"(?<![\w-])[Ww]ir(?![\w-])")
_DE_UNS = re.compile(r"(?<![\w-])uns(?![\w-])")
_DE_AND_VERB = re.compile(r"(?<![\w-])((?:und|oder|aber|dann)\s+)([a-zäöüß]+e)(?![\w-])")
_DE_NOT_VERB = frozenset("eine keine meine deine seine ihre unsere eure diese jene welche solche alle beide viele"
                         " einige manche jede ohne gerne heute danke bitte die sie wie nie hie".split())


def _german_verb(word: str) -> str | None:
    """The third-person form of a German first-person singular present ("schicke" -> "schickt",
    `twin.text.third_person_de.third_singular`, the rule the owner's own German goes through), None when `word` does not
    look like one; a past ("schickte", "war") is the same in both persons."""
    out = german_third_singular(word)
    return None if out is None or out == word else out


def _german(text: str, name: str) -> str:
    def ich(match: re.Match) -> str:
        before, after = match["before"], match["after"]
        subject = name
        if before is not None and (verb := _german_verb(before)):  # "Morgen schicke ich …"
            return f"{verb} {subject}" + (f" {after}" if after else "")
        out = (f"{before} " if before else "") + subject
        if after is not None:
            out += " " + (_german_verb(after) or after)
        return out

    genitive = name + ("'" if name[-1:] in "sßxz" else "s")
    reflexive = _DE_ICH.search(text) is not None  # "ich melde mich" -> "Anna meldet sich"
    text = _DE_ICH.sub(ich, text)
    if reflexive:  # "ich buche das Hotel und melde mich" -> "… und meldet sich"
        text = _DE_AND_VERB.sub(lambda m: m.group(1) + (_german_verb(m.group(2)) or m.group(2))
                                if m.group(2) not in _DE_NOT_VERB else m.group(), text)
    text = _DE_OBJECT.sub("sich" if reflexive else name, text)
    text = _DE_POSSESSIVE.sub(genitive, text)
    plural = _DE_WIR.search(text) is not None
    text = _DE_WIR.sub(f"{name} und andere", text)
    text = _DE_UNS.sub("sich" if plural else f"{name} und anderen", text)
    return _DE_OUR.sub(lambda m: ("I" if m.group(1) == "U" else "i") + "hr" + (m.group(2) or ""), text)


# --- French ------------------------------------------------------------------------------------------------------

_FR_JE = re.compile(r"(?<![\w-])(?P<je>[Jj]e|[Jj]['’])\s*(?P<neg>ne\s+|n['’])?"
                    r"(?P<obj>(?:vous|te|lui|leur|les|la|le|l['’]|en|y|me|m['’])\s*)?"
                    r"(?P<verb>[a-zàâçéèêëîïôûùüÿœ]+)?")
_FR_POSSESSIVE = {"mon": "son", "ma": "sa", "mes": "ses", "Mon": "Son", "Ma": "Sa", "Mes": "Ses"}


def _french_verb(word: str) -> str:
    """A writer's "je" verb in the third person, by the rule the owner's own French uses
    (`third_person_fr.third_singular`); a word that is no verb form stays as written."""
    return french_third_singular(word) or word


def _french(text: str, name: str) -> str:
    def je(match: re.Match) -> str:
        neg, obj, verb = match["neg"] or "", match["obj"] or "", match["verb"] or ""
        obj = re.sub(r"^m(?=['’])", "s", re.sub(r"^me(?=\s)", "se", obj))  # reflexive: je me réjouis -> se
        return f"{name} {neg}{obj}{_french_verb(verb)}".rstrip() + (" " if not verb and not obj else "")

    text = _FR_JE.sub(je, text)
    text = re.sub(r"(?<![\w-])(?:moi)(?![\w-])", name, text)
    text = re.sub(r"(?<![\w-])m['’](?=\w)", "l'", text)
    text = re.sub(r"(?<![\w'’-])me(?=\s)", "lui", text)
    return re.sub(r"(?<![\w-])(?:[Mm]on|[Mm]a|[Mm]es)(?![\w'’-])", lambda m: _FR_POSSESSIVE[m.group()], text)


# --- Spanish -----------------------------------------------------------------------------------------------------

_ES_IRREGULAR = {"soy": "es", "estoy": "está", "tengo": "tiene", "voy": "va", "puedo": "puede", "quiero": "quiere",
                 "hago": "hace", "he": "ha", "sé": "sabe", "digo": "dice", "vengo": "viene", "pongo": "pone",
                 "salgo": "sale", "doy": "da", "envío": "envía", "llamo": "llama", "mando": "manda"}
_ES_YO = re.compile(r"(?<![\w-])(?P<yo>[Yy]o)(?:\s+(?P<clitic>(?:me|te|le|les|lo|la|los|las|nos|se)\s+)?"
                    r"(?P<verb>[a-záéíóúñü]+))?(?![\w-])")


def _spanish(text: str, name: str) -> str:
    def yo(match: re.Match) -> str:
        verb, clitic = match["verb"], (match["clitic"] or "").replace("me ", "se ")
        if verb is None:
            return name
        if verb in _ES_IRREGULAR:
            verb = _ES_IRREGULAR[verb]
        elif verb.endswith("é") and len(verb) > 3:  # future: enviaré -> enviará
            verb = verb[:-1] + "á"
        return f"{name} {clitic}{verb}"

    text = _ES_YO.sub(yo, text)
    text = re.sub(r"(?<![\w-])conmigo(?![\w-])", f"con {name}", text)
    text = re.sub(r"(?<![\w-])(?:[Mm]í)(?![\w-])", name, text)
    return re.sub(r"(?<![\w-])([Mm])i(s?)(?![\w-])", lambda m: ("S" if m.group(1) == "M" else "s") + "u" + m.group(2),
                  text)
