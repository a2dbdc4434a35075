"""Secrets whose value is a phrase: the words after a password label, read to the end of their clause.

`twin.text.sensitivity.find_secrets` runs `phrase_secrets` beside its regex rules, which take one password-shaped word
("hunter2", "Weser-Lachs-7714"). Two shapes more (a tester's findings: "My password is correct horse battery
staple.", "Password: let me in please"):

- after a password label and a verb ("is", "ist", "lautet", "est", "es", "é", "è"): 2-8 words that are all content
  words of the verb's language (no article, pronoun, preposition, auxiliary, adverb of time or intensifier:
  `FUNCTION_WORDS`, English, German, French, Spanish, Portuguese, Italian, Dutch), the last one not describing a
  password ("long", "secure", "geheim", an English "-ly"/"-ed"/"-ive"/... word), none of them a unit
  ("characters") or a possessive ("Anna's"): "purple monkey dishwasher", not "on a sticker under the router",
  "very much like this one", "twelve characters long", "case sensitive";
- after a password label (or "pw"/"pwd"/"pass") and ":" or "=": the rest of the clause, one word or several of any
  shape, unless it reads like a description or a pointer: first word a function word or an instruction ("in the
  drawer", "see Bitwarden", "click here"), one describing word or a placeholder ("required", "changed", "n/a",
  "****"), a unit ("at least 12 characters"), or more than 8 words (a sentence).

Neither counts after a generic label ("A good password: three random words", "every password is …"). A quoted
value is the regex rules' (any quoted string after a password label). Pure; each label reads a bounded window, so
scanning is linear in the text length.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from twin.text.secret_labels import NOT_A_VALUE, PASSWORD, PASSWORD_ABBR, VERB
from twin.text.secret_shapes import Found

MAX_PHRASE_WORDS = 8
"""Most words of a phrase value; a longer clause is a sentence about the password (ours)."""
CLAUSE_WINDOW = 160
"""Characters after the separator read for the value's clause."""

FUNCTION_WORDS = {language: frozenset(words.split()) for language, words in {
    "en": "a an the this that these those my your his her its our their some any no not every each all both either"
          " neither another other such own same to of in on at by for with from into onto over under below above"
          " behind between through about against without within inside via per as like than then so too very quite"
          " rather pretty really fairly super extra just only also even still already again now always never often"
          " sometimes usually soon today tomorrow yesterday here there where when what which who whom whose why how"
          " if and or but nor because while although though since until unless i me we us you he him she it they"
          " them is are was were be been being am has have had do does did can could will would shall should may"
          " might must ever yet more most less least much many few several enough everywhere somewhere anywhere",
    "de": "der die das den dem des ein eine einen einem einer eines mein meine meinen dein deine sein seine ihr ihre"
          " unser unsere euer kein keine nicht noch schon auch nur sehr zu zum zur im in am an auf aus bei mit nach"
          " von vor über unter für ohne um wie als und oder aber doch ist sind war hat haben wird werden kann ich du"
          " er sie es wir man so ganz ziemlich etwas immer nie jetzt hier dort gleich",
    "fr": "le la les un une des du de d l mon ma mes ton ta tes son sa ses notre nos votre vos leur leurs ce cet"
          " cette ces ne pas plus très trop assez bien encore déjà toujours jamais dans sur sous avec sans pour par"
          " en à au aux et ou mais donc que qui quoi je tu il elle on nous vous ils elles est sont était a ont comme"
          " ici maintenant",
    "es": "el la los las un una unos unas mi mis tu tus su sus nuestro nuestra de del en con sin para por a al y o"
          " pero que muy demasiado bastante no ya todavía siempre nunca es son era está yo tú él ella nosotros como"
          " aquí ahora",
    "pt": "o a os as um uma uns umas meu minha seu sua de do da dos das em no na nos nas com sem para por e ou mas"
          " que muito demais não já ainda sempre nunca é são era está eu ele ela nós como aqui agora",
    "it": "il lo la i gli le un uno una mio mia suo sua di del della in nel nella con senza per da e o ma che molto"
          " troppo non già ancora sempre mai è sono era io lui lei noi come qui ora",
    "nl": "de het een mijn jouw zijn haar ons onze niet nog al ook heel erg te zeer in op aan met zonder voor door"
          " van en of maar dat die wie is was ik jij hij zij wij als hier nu",
}.items()}
"""Words that never make up a passphrase in a clause of that language: a clause holding one describes the password
("is on a sticker", "ist sehr kurz"). Small on purpose: a broad stop list ("three", "little") would miss "three
little pigs"."""
DESCRIBING = frozenset("""
long short weak strong secure insecure safe unsafe wrong right correct incorrect invalid valid simple easy hard
difficult complex tricky old new same different unique secret private personal public fine good bad great terrible
awful okay ok default blank empty missing lost weird funny silly stupid obvious random common temporary permanent
known shared expired changed required optional mandatory sensitive protected encrypted hashed set reset yes no
kurz lang schwach stark sicher unsicher falsch richtig einfach schwer kompliziert alt neu geheim gut schlecht leer
court courte longue faible fort forte sûr sûre faux fausse facile difficile compliqué vieux nouveau nouvelle même
secrète bon bonne mauvais vide corto corta largo larga débil fuerte seguro segura incorrecto fácil difícil nuevo
nueva viejo igual secreto secreta bueno buena malo vacío curta curto longa longo fraca fraco errada errado nova
novo velha velho boa bom ruim lunga lungo debole sicura sicuro sbagliata nuova vecchia uguale segreta segreto
buona kort zwak sterk veilig onveilig fout goed makkelijk moeilijk oud nieuw zelfde
""".split())
"""The last word of a clause that says what a password is like, not what it is ("is pretty weak", "ist geheim")."""
UNITS = frozenset("characters character chars letters digits numbers symbols words zeichen ziffern stellen"
                  " buchstaben caractères chiffres lettres caracteres dígitos letras cifre lettere caratteri tekens"
                  " cijfers".split())
"""Words that measure a password ("twelve characters long", "mindestens 12 Zeichen")."""
INSTRUCTIONS = frozenset("see ask check use enter type call contact visit go follow choose pick change click tap"
                         " forgot forgotten stored saved written kept same siehe voir ver vedi zie".split())
"""First words of a value that points somewhere else ("Password: see Bitwarden", "Password: stored in the vault")."""
_ENGLISH_DESCRIPTIVE = re.compile(r"(?:ly|ed|able|ible|ive|ous|ful|less)$")

_VERB_LANGUAGES = {"is": ("en", "nl"), "was": ("en", "nl"), "are": ("en",), "were": ("en",), "reads": ("en",),
                   "ist": ("de",), "war": ("de",), "lautet": ("de",), "sind": ("de",), "est": ("fr",),
                   "était": ("fr",), "es": ("es",), "era": ("es", "it", "pt"), "é": ("pt",), "è": ("it",)}
_LABEL_LANGUAGES = (("passwort", "de"), ("kennwort", "de"), ("wlan", "de"), ("mot", "fr"), ("contrase", "es"),
                    ("clave", "es"), ("senha", "pt"), ("palavra", "pt"), ("parola", "it"), ("password", "it"),
                    ("wachtwoord", "nl"))

_FILLER = r"[^\s,;:!?.。，；]{1,40}"
_VERB_CASE = re.compile(rf"(?P<label>{PASSWORD})(?:[ \t]+{_FILLER}){{0,6}}?[ \t]+(?P<verb>{VERB})[ \t]+")
_COLON_CASE = re.compile(rf"(?P<label>{PASSWORD}|{PASSWORD_ABBR})(?:[ \t]+{_FILLER}){{0,4}}?[ \t]*[:=：][ \t]*")
CLAUSE_END = re.compile(r"[.!?…](?=\s|$)|[;\n\"“”«»]|,\s|\s[(\[]|\s[-–—]\s")
"""Where the clause of a value ends: a sentence end, ";", a comma and a space, an opening bracket, a dash."""
_GENERIC = re.compile(r"(?i)(?:^|\s)(a|an|any|every|each|good|strong|secure|safe|your|ein|eine|jedes|un|une"
                      r"|chaque|bon|una|cada|uma|um|ogni|een|elk)(?:\s+[\w-]+)?\s+$")
_WORD = re.compile(r"\S+")
_PATH = re.compile(r"~?(?:/[\w.-]+){2,}/?")


def phrase_secrets(text: str) -> Iterator[Found]:
    """Phrase values after a password label (see the module docstring), kind "password", in text order (a value
    both shapes find is listed twice; `find_secrets` drops duplicates). Read-only; linear in `len(text)`."""
    if not any(c in text for c in ":=：") and " " not in text:
        return
    for match in _VERB_CASE.finditer(text):
        if not _generic(text, match.start(), _label_languages(match.group("label"))):
            verb = match.group("verb").split()[0].lower()
            found = _verb_phrase(text, match.end(), _VERB_LANGUAGES.get(verb, ("en",)))
            if found is not None:
                yield found
    for match in _COLON_CASE.finditer(text):
        languages = _label_languages(match.group("label"))
        if not _generic(text, match.start(), languages):
            found = _colon_value(text, match.end(), languages)
            if found is not None:
                yield found


def _generic(text: str, label_start: int, languages: tuple[str, ...]) -> bool:
    """A label about passwords in general ("a good password", "every password"), not about one of them; "a" is
    the Portuguese article ("A senha é …")."""
    found = _GENERIC.search(text, max(0, label_start - 30), label_start)
    return found is not None and not (found.group(1).lower() == "a" and "pt" in languages)


def _label_languages(label: str) -> tuple[str, ...]:
    low = label.lower()
    return ("en", *(language for stem, language in _LABEL_LANGUAGES if stem in low))


def _clause(text: str, start: int) -> tuple[str, list[re.Match]]:
    """The clause from `start` (up to `CLAUSE_WINDOW` characters, cut at its end) and its words."""
    window = text[start:start + CLAUSE_WINDOW]
    end = CLAUSE_END.search(window)
    clause = window[:end.start()] if end else window
    return clause, list(_WORD.finditer(clause))


def _bare(word: str) -> str:
    return word.strip("'’\"“”«»()[]{}.,!?").lower()


def _verb_phrase(text: str, start: int, languages: tuple[str, ...]) -> Found | None:
    """The phrase after "<label> … is": its content words up to a function word or the clause end."""
    if text[start:start + 1] in "\"'“‘«„":
        return None  # quoted: the regex rules take it
    clause, words = _clause(text, start)
    if len(clause) == CLAUSE_WINDOW:
        return None  # no clause end in sight: prose, not a value
    stop = set().union(*(FUNCTION_WORDS[lang] for lang in languages))
    kept: list[re.Match] = []
    for word in words:
        bare = _bare(word.group())
        if bare in stop:
            break
        if not any(c.isalpha() for c in bare) or "'s" in bare or "’s" in bare or bare in UNITS:
            return None
        kept.append(word)
    if not 2 <= len(kept) <= MAX_PHRASE_WORDS:
        return None
    last = _bare(kept[-1].group())
    if last in DESCRIBING or ("en" in languages and _ENGLISH_DESCRIPTIVE.search(last)):
        return None
    return Found("password", start + kept[0].start(), start + kept[-1].end())


def _colon_value(text: str, start: int, languages: tuple[str, ...]) -> Found | None:
    """The value after "<label>:": the rest of its clause, unless it describes or points (module docstring)."""
    if text[start:start + 1] in "\"'“‘«„":
        return None
    clause, words = _clause(text, start)
    if not words or len(words) > MAX_PHRASE_WORDS or len(clause) == CLAUSE_WINDOW:
        return None
    value = clause[words[0].start():words[-1].end()].rstrip(".,;:!?")
    if not plausible_value(value, languages):
        return None
    return Found("password", start + words[0].start(), start + words[0].start() + len(value))


def plausible_value(value: str, languages: tuple[str, ...] = ("en",)) -> bool:
    """Whether `value`, written after a secret's label and ":" or "=" (or under a secret's key in a config file),
    is the secret itself: 3+ characters, not a reference or placeholder ("$VAR", "<token>", "{{ vault }}",
    "none", "n/a", "****"), not a path; one word that does not describe ("required", "changed"); several words
    whose first is no function word of `languages` nor an instruction ("in the drawer", "see Bitwarden"), with
    no unit among them ("at least 12 characters")."""
    words = [_bare(w) for w in value.split()]
    if len(value) < 3 or value[0] in "$%<{[" or len(set(value)) == 1 or _PATH.fullmatch(value) or not words:
        return False
    if len(words) == 1:
        word = words[0]
        return word not in NOT_A_VALUE and word not in DESCRIBING and not (
            word.isalpha() and _ENGLISH_DESCRIPTIVE.search(word) and "en" in languages)
    stop = set().union(*(FUNCTION_WORDS[lang] for lang in languages))
    return words[0] not in stop and words[0] not in INSTRUCTIONS and not UNITS.intersection(words)
