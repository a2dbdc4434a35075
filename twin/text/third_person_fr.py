"""French first person -> "Owner" (seed 000's third-person sentence, in French: no translation).

"Je suis végétarien." -> "Owner est végétarien."; "J'habite à Lyon." -> "Owner habite à Lyon."; "Je ne peux pas
venir." -> "Owner ne peut pas venir."; "Je m'appelle Luc." -> "Owner s'appelle Luc."; "ma sœur" -> "la sœur
d'Owner" (mon/ma/mes/notre/nos + noun -> article + noun + "d'Owner", "de le" contracted to "du"); "moi", "nous"
after a preposition -> "Owner". "nous" as subject is the owner too, as in English ("Nous habitons à Nantes." ->
"Owner habite à Nantes."). The verb takes the third-person singular: a table of irregular verbs, else the
regular ending (-e stays, -x/-s -> -t, -ds -> -d, -ons -> -e). An object "me" after another subject ("Elle
m'appelle") is left as written. Rules ours; tests/test_third_person.py. Pure, linear in the sentence.
"""

from __future__ import annotations

import re

__all__ = ["looks_french", "rewrite", "third_singular"]

_HINTS = frozenset(
    "je j' moi me m' mon ma mes nous notre nos le la les et est suis ai pas ne n' de des une un avec pour dans"
    " chez très du au aux sur mais ou que qui depuis tous toutes tout aussi bien beaucoup aime habite travaille"
    " à où ça cette ce sont ont fait hier demain aujourd'hui semaine dernière dernier prochain prochaine s' l' d'"
    " qu' c' y en se a ans fille fils mari femme".split())
_FIRST_PERSON = re.compile(r"(?i)(?<![\w'’-])(?:(?:je|moi|mon|ma|mes|nous|notre|nos)(?![\w-])|j['’])")
_IRREGULAR = {
    "suis": "est", "ai": "a", "vais": "va", "fais": "fait", "peux": "peut", "veux": "veut", "dois": "doit",
    "sais": "sait", "vois": "voit", "crois": "croit", "bois": "boit", "vis": "vit", "lis": "lit", "dis": "dit",
    "écris": "écrit", "mets": "met", "connais": "connaît", "reconnais": "reconnaît", "viens": "vient",
    "tiens": "tient", "deviens": "devient", "reviens": "revient", "cours": "court", "pars": "part",
    "sors": "sort", "dors": "dort", "sens": "sent", "prends": "prend", "apprends": "apprend",
    "comprends": "comprend", "suivrai": "suivra", "vaux": "vaut", "meurs": "meurt",
}
_PLURAL = {
    "sommes": "est", "avons": "a", "allons": "va", "faisons": "fait", "pouvons": "peut", "voulons": "veut",
    "devons": "doit", "savons": "sait", "voyons": "voit", "buvons": "boit", "vivons": "vit", "lisons": "lit",
    "disons": "dit", "écrivons": "écrit", "mettons": "met", "connaissons": "connaît", "venons": "vient",
    "prenons": "prend", "partons": "part", "sortons": "sort", "dormons": "dort", "finissons": "finit",
    "choisissons": "choisit", "étions": "était", "avions": "avait", "serons": "sera", "aurons": "aura",
    "irons": "ira", "ferons": "fera",
}
_CLITICS = frozenset("le la l' les lui leur y en me m' te t' se s' nous vous".split())
_ELIDED = re.compile(r"(?i)^(?:j|m|t|s|l|n|d|qu)['’]")
_VOWEL = "aeiouyhéèêàâîïôûAEIOUYHÉÈÊÀÂÎÏÔÛ"
_PRENOMINAL = frozenset(
    "petit petite petits petites grand grande grands grandes meilleur meilleure meilleurs meilleures nouveau"
    " nouvel nouvelle nouveaux nouvelles vieux vieil vieille vieilles jeune jeunes premier première premiers"
    " premières cher chère chers chères bon bonne bons bonnes beau bel belle beaux belles ancien ancienne"
    " gros grosse".split())
_PREPOSITIONS = frozenset("avec chez pour sans à de pour par sur sous vers contre entre comme".split())
_CONTRACT = ((re.compile(r"\bde le\b"), "du"), (re.compile(r"\bà le\b"), "au"), (re.compile(r"\bde les\b"), "des"),
             (re.compile(r"\bà les\b"), "aux"), (re.compile(r"\bDe le\b"), "Du"), (re.compile(r"\bÀ le\b"), "Au"))
_TOKENS = re.compile(r"[\wÀ-ÿœŒ]+['’]|[\wÀ-ÿœŒ]+(?:-[\wÀ-ÿœŒ]+)*|[^\w\s]|\s+")


def looks_french(sentence: str) -> bool:
    """True when `sentence` holds a French first-person word (je, j', moi, mon, ma, mes, nous, notre, nos) and
    more French hint words than English ones ("Je suis végétarien.", not "Ma is what I call my mother.")."""
    if _FIRST_PERSON.search(sentence) is None:
        return False
    words = [w.lower() for w in _TOKENS.findall(sentence.replace("’", "'")) if w.strip() and w[0].isalnum()]
    french = sum(word in _HINTS for word in words)
    english = sum(word in ("the", "and", "is", "my", "i", "to", "of", "it", "with", "was") for word in words)
    strong = re.search(r"(?i)(?<![\w'’-])(?:je|moi|mes|nous|notre|nos)(?![\w-])|(?<![\w'’-])j['’]", sentence)
    return french > english and (french >= 2 or strong is not None)


def third_singular(verb: str, plural: bool = False) -> str | None:
    """The third-person singular of a French first-person verb form (`plural`: a "nous" form), or None when it
    does not look like one: "suis" -> "est", "habite" -> "habite", "finis" -> "finit", "prends" -> "prend",
    "étais" -> "était", "serai" -> "sera", "habitons" -> "habite"."""
    low = verb.lower()
    table = _PLURAL if plural else _IRREGULAR
    if low in table:
        out = table[low]
    elif plural:
        if not low.endswith("ons") or len(low) < 5:
            return None
        out = low[:-4] + "ait" if low.endswith("ions") else low[:-3] + ("" if low[-4] == "e" else "e")
    elif low.endswith("e") or low.endswith("é"):
        return verb  # -er verbs: j'habite / il habite
    elif low.endswith("rai"):
        out = low[:-1]  # future: serai -> sera
    elif low.endswith("x"):
        out = low[:-1] + "t"
    elif low.endswith(("ds", "ts")):
        out = low[:-1]
    elif low.endswith("s"):
        out = low[:-1] + "t"
    else:
        return None
    return out.capitalize() if verb[:1].isupper() else out


def rewrite(sentence: str) -> str:
    """`sentence` with the French first person as "Owner" (see the module docstring)."""
    tokens = _TOKENS.findall(sentence)
    words = [i for i, t in enumerate(tokens) if t.strip() and t[0].isalnum()]
    for n, i in enumerate(words):
        low = tokens[i].lower().replace("’", "'")
        if low in ("je", "j'") or (low == "nous" and _is_subject(tokens, words, n)):
            _subject(tokens, words, n, plural=low == "nous")
        elif low in ("mon", "ma", "mes", "notre", "nos") and n + 1 < len(words):
            _possessive(tokens, words, n)
        elif low in ("moi", "nous"):
            tokens[i] = "Owner"
            if n and tokens[words[n - 1]].lower() == "et" and n + 1 < len(words) \
                    and tokens[words[n + 1]].endswith("ons"):  # "Ma femme et moi adorons" -> "… et Owner adorent"
                tokens[words[n + 1]] = tokens[words[n + 1]][:-3] + "ent"
        elif low in ("me", "m'") and n + 1 < len(words):
            _object(tokens, words, n)
    out = "".join(tokens)
    for pattern, repl in _CONTRACT:
        out = pattern.sub(repl, out)
    return out


def _is_subject(tokens: list[str], words: list[int], n: int) -> bool:
    """"nous" opens its clause (first word, or after a comma or et/mais/ou/que/quand/parce que) and is not after a
    preposition."""
    if n == 0:
        return True
    previous = tokens[words[n - 1]].lower()
    between = "".join(tokens[words[n - 1] + 1:words[n]])
    return "," in between or previous in ("et", "mais", "ou", "que", "quand", "car", "si", "puis", "donc")


def _subject(tokens: list[str], words: list[int], n: int, plural: bool) -> None:
    """je/j'/nous at `words[n]` -> "Owner", the clitics after it kept (a reflexive me/m'/nous -> se/s'), the verb
    conjugated, "ne" elided before a vowel."""
    i = words[n]
    space_after = tokens[i].endswith(("'", "’")) is False
    tokens[i] = "Owner" + ("" if space_after else " ")
    k = n + 1
    negation = None
    while k < len(words):
        low = tokens[words[k]].lower().replace("’", "'")
        if low in ("ne", "n'"):
            negation = words[k]
        elif low in ("me", "m'", "nous") and (low != "nous" or plural):
            tokens[words[k]] = {"me": "se", "m'": "s'", "nous": "se"}[low]
        elif low not in _CLITICS:
            break
        k += 1
    if k < len(words) and (new := third_singular(tokens[words[k]], plural)) is not None:
        tokens[words[k]] = new
        if negation is not None and tokens[negation].lower() == "ne" and new[:1] in _VOWEL \
                and words[k] == _next_word(words, negation):
            tokens[negation] = "n'"
            tokens[negation + 1] = ""  # the blank after "ne"


_PARTICIPLE = re.compile(r"(?i)\w+(?:é|ée|és|ées|i|ie|is|it|u|ue|ert|int)$")


def _object(tokens: list[str], words: list[int], n: int) -> None:
    """An object "me"/"m'" after another subject ("Julie me remplace", "Elle m'a appelé") -> the verb (and its
    participle) then "Owner": "Julie remplace Owner", "Elle a appelé Owner"."""
    verb_at = n + 1
    if verb_at + 1 < len(words) and _PARTICIPLE.fullmatch(tokens[words[verb_at + 1]]) and \
            tokens[words[verb_at]].lower() in ("a", "avait", "ont", "est", "va", "vont"):
        verb_at += 1
    tokens[words[n]] = ""
    if tokens[words[n]+ 1:words[n] + 2] == [" "]:
        tokens[words[n] + 1] = ""
    tokens[words[verb_at]] += " Owner"


def _next_word(words: list[int], i: int) -> int:
    return words[words.index(i) + 1]


_DETERMINERS = frozenset("le la les l un une des du mon ma mes ton ta tes son sa ses notre nos votre vos leur leurs"
                         " ce cet cette ces".split())


def _possessive(tokens: list[str], words: list[int], n: int) -> None:
    """mon/ma/mes/notre/nos + (adjective) + noun -> le/la/l'/les + (adjective) + noun + " d'Owner"."""
    low = tokens[words[n]].lower()
    noun_at = n + 1
    if tokens[words[noun_at]].lower() in _PRENOMINAL and noun_at + 1 < len(words):
        noun_at += 1
    while (noun_at + 2 < len(words) and tokens[words[noun_at + 1]].lower() in ("de", "à")
           and tokens[words[noun_at + 2]][:1].islower() and tokens[words[noun_at + 2]].lower() not in _DETERMINERS):
        noun_at += 2  # a compound noun: "mon mot de passe" -> "le mot de passe d'Owner", "ma brosse à dents"
    first = tokens[words[n + 1]]
    plural = low in ("mes", "nos")
    if plural:
        article = "les "
    elif first[:1] in _VOWEL:
        article = "l'"
    elif low == "ma" or (low == "notre" and tokens[words[noun_at]].lower().endswith("e")):
        article = "la "
    else:
        article = "le "
    article = article.capitalize() if tokens[words[n]][:1].isupper() else article
    tokens[words[n]] = article.rstrip(" ")
    if article.endswith("'"):
        tokens[words[n] + 1] = ""  # "l'amie": no blank after the apostrophe
    tokens[words[noun_at]] = tokens[words[noun_at]] + " d'Owner"
    if noun_at + 1 < len(words) and tokens[words[noun_at + 1]][:1].isupper():  # "mon amie Claire est…"
        name = words[noun_at + 1]
        tokens[words[noun_at]] += ","
        following = next((t for t in tokens[name + 1:] if t.strip()), "")
        if following and following[0].isalnum():
            tokens[name] += ","
