"""Seed 000's memory contract checked on a sentence someone else wrote (the model's memories): one self-contained
sentence in the third person about Owner or a named third party.

A model asked for "Owner …" still writes "You have a dog called Rex.", "I moved to Berlin.", questions, lists in
one item and reminders; stored as written, they come back to the owner as "things I remember about you".
`fit_to_contract()` rewrites what can be rewritten mechanically and names the reason for what it drops:

- a list or several sentences in one item -> one memory per sentence (`twin.text.extractor.split_sentences`);
- "Remember to X" / "Don't forget to X" -> "Owner needs to X" (a reminder about Owner, ours); "Remember that X",
  "Note that X", "Keep in mind that X" -> X;
- English first and second person -> "Owner" (`twin.text.third_person.first_to_third_person`,
  `second_to_third_person`); text inside quotation marks is someone's words and is not touched;
- dropped: a question; an instruction (an imperative: "Call Lena tomorrow.", "Bitte …"); first or second person
  in German, French or Spanish (no mechanical rewrite of their verbs here); a sentence opening with a pronoun
  that refers to nothing in it ("He never listens.", "Her name is Biscuit."); outside 12..400 characters.

Reasons name the rule and at most one pronoun, never the sentence (DESIGN.md invariant 5: diary lines never
quote memory text). Pure: no I/O, no state; linear in the length of the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from twin.text.extractor import MAX_CHARS, MIN_CHARS, split_sentences
from twin.text.third_person import first_to_third_person, second_to_third_person

__all__ = ["Fitted", "fit_to_contract", "person_words"]


@dataclass
class Fitted:
    """What `fit_to_contract()` made of one text: the sentences that keep the contract (possibly rewritten, in
    text order), what was changed (`rewrites`: reasons such as "second person rewritten"), and why each dropped
    piece was dropped (`dropped`: one reason per piece, e.g. "a question")."""

    sentences: list[str] = field(default_factory=list)
    rewrites: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


_QUOTED = re.compile(r"\"[^\"\n]{1,300}\"|“[^”\n]{1,300}”|„[^“”\n]{1,300}[“”]|«[^»\n]{1,300}»|‘[^’\n]{1,300}’"
                     r"|(?<!\w)'[^'\n]{1,300}'(?!\w)")
_MASK = re.compile("\ue000(\\d+)\ue001")  # private-use marks: sentence splitting keeps them
_REMINDER = re.compile(r"(?i)^(?:please\s+)?(?:remember|don['’]t forget|do not forget|never forget|make sure)\s+to\s+")
_PREAMBLE = re.compile(r"(?i)^(?:please\s+)?(?:remember|note|keep in mind|bear in mind|don['’]t forget|do not forget)"
                       r"\s*(?:,\s*|\s+)that\s+|^(?:note|reminder|fyi)\s*:\s*(?=[A-Z])")
_IMPERATIVE_VERBS = frozenset("""
    add answer ask avoid book bring buy call cancel change check choose confirm consider contact delete do don't
    email find follow forget forward give go ignore keep let look make message move note order pay pick please
    print put read reply remember remind remove renew reply reschedule respond return schedule send set share
    show sign start stop take tell text think try update use visit wait write never always
    """.split())
_RARELY_NOUNS = frozenset("""please never always don't let ignore forget reveal send forward tell ask buy bring give
    make take try avoid delete remove cancel reply respond contact remind remember renew pay""".split())
"""Imperative verbs that seldom open a sentence as a noun ("Call with Lena …" and "Book club …" do)."""
_OBJECT_START = frozenset("""a an the this that these those my your his her its our their some any all every each it
    them him me us up out back off to owner""".split())
_GERMAN_INSTRUCTION = re.compile(r"(?i)^(?:bitte|denk(?:e)? daran|vergiss nicht|erinnere|merk(?:e)? dir)\b")
_LANGUAGE_HINTS = {
    "en": frozenset("the and is are was were has have with for of to in on at from not this that it".split()),
    "de": frozenset("der die das und ist sind nicht ein eine einen einem mit auf für von zu den dem sich auch hat"
                    " hast bist habe bin wohnt wohnst arbeitet im am bei nach seit wie sehr gern gerne sagt soll"
                    " sollen kann kannst muss musst wird werden morgen heute jetzt immer noch schon oder aber"
                    " weil dass wenn".split()),
    "fr": frozenset("le la les et est sont un une des du dans pour avec sur pas au aux ce qui que très ai as es"
                    " suis habite habites travaille aime aimes".split()),
    "es": frozenset("el la los las y es son un una en con por para del al que se muy está tiene tienes vive vives"
                    " trabaja trabajas eres soy tengo gusta".split()),
}
_PERSON_WORDS = {  # (first person, second person) of the languages read here, lowercased
    "en": (frozenset("i i'm i've i'll i'd me my mine myself we we're we've we'll we'd us our ours ourselves".split()),
           frozenset("you you're you've you'll you'd your yours yourself yourselves".split())),
    "de": (frozenset("ich mich mir mein meine meinen meinem meiner meines wir uns unser unsere unseren unserem"
                     " unserer unseres".split()),
           frozenset("du dich dir dein deine deinen deinem deiner deines euch euer eure euren eurem eurer".split())),
    "fr": (frozenset("je j' moi me m' mon ma mes nous notre nos".split()),
           frozenset("tu toi te t' ton ta tes vous votre vos".split())),
    "es": (frozenset("yo me mi mis conmigo nosotros nosotras nuestro nuestra nuestros nuestras".split()),
           frozenset("tú tu tus te ti contigo usted ustedes vosotros vosotras vuestro vuestra vuestros vuestras"
                     " os".split())),
}
_LANGUAGE_NAMES = {"en": "English", "de": "German", "fr": "French", "es": "Spanish"}
_GERMAN_FORMAL = re.compile(r"(?<!^)(?<![.!?]\s)\b(?:Sie|Ihnen|Ihr|Ihre|Ihren|Ihrem|Ihrer|Ihres)\b")
_WORDS = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?|[^\W\d_]+['’]")
_DANGLING = frozenset("he she they him her his hers its their theirs them er ihm ihn seine sein il elle ils elles"
                      " lui leur leurs él ella ellos ellas".split())
_DEMONSTRATIVE = re.compile(r"(?i)^(?:it|this|that|these|those|es|das|dies|ce|cela|ça|esto|eso)\b(?:['’]s)?"
                            r"(?:\s+(?:is|was|are|were|has|had|will|would|can|could|does|did|seems|looks|means|makes"
                            r"|ist|war|sind|waren|hat|est|était|es|era|fue))?\b")
_QUESTION = re.compile(r"[?？][\"'”’»)\]]*$")


def fit_to_contract(text: str) -> Fitted:
    """The sentences of `text` that keep seed 000's contract, rewritten where a rule can (see the module
    docstring), and a reason for each piece dropped. `text` is one memory as a model returned it (already
    cleaned of control characters); each sentence returned is 12..400 characters and ends with sentence
    punctuation. Never raises."""
    fitted = Fitted()
    masked, quotes = _mask_quotes(text)
    pieces = split_sentences(masked)
    if len(pieces) > 1:
        fitted.rewrites.append(f"split into {len(pieces)} sentences")
    for piece in pieces:
        sentence, why = _fit_one(piece, quotes, fitted.rewrites)
        if sentence is None:
            fitted.dropped.append(why)
        else:
            fitted.sentences.append(sentence)
    if not pieces:
        fitted.dropped.append("no sentence in it")
    return fitted


def _fit_one(masked: str, quotes: list[str], rewrites: list[str]) -> tuple[str | None, str]:
    """One sentence (its quotes masked, `_mask_quotes`) fitted to the contract: `(sentence, "")`, or `(None,
    reason)`."""
    sentence = masked.strip()
    if sentence.endswith(":"):
        return None, "a fragment (a list heading)"
    if _QUESTION.search(sentence):
        return None, "a question"
    if reminder := _REMINDER.match(sentence):
        sentence = "Owner needs to " + sentence[reminder.end():]
        rewrites.append("reminder rewritten as what Owner needs to do")
    elif preamble := _PREAMBLE.match(sentence):
        sentence = sentence[preamble.end():]
        sentence = sentence[:1].upper() + sentence[1:]
        rewrites.append("'remember that' dropped")
    if _is_instruction(sentence):
        return None, "an instruction"
    masked = sentence
    language = _language(masked)
    first, second = person_words(masked, language)
    if (first or second) and language != "en":
        person = "first" if first else "second"
        word = (first or second)[0]
        return None, f"in the {person} person ('{word}', {_LANGUAGE_NAMES.get(language or '', 'not English')})"
    if first or second:
        masked = first_to_third_person(second_to_third_person(masked) if second else masked)
        rewrites.append(f"{'first' if first else 'second'} person rewritten")
        left = person_words(masked, "en")
        if left[0] or left[1]:
            return None, f"in the {'first' if left[0] else 'second'} person ('{(left[0] or left[1])[0]}')"
    if why := _dangling(masked):
        return None, why
    sentence = _MASK.sub(lambda m: quotes[int(m[1])], masked)
    sentence = sentence[:1].upper() + sentence[1:]
    if sentence[-1:] not in ".!?。！？…\"'”)»":
        sentence += "."
    if not MIN_CHARS <= len(sentence) <= MAX_CHARS:
        return None, f"not {MIN_CHARS}..{MAX_CHARS} characters long"
    return sentence, ""


def person_words(sentence: str, language: str | None) -> tuple[list[str], list[str]]:
    """`(first-person words, second-person words)` of `sentence` in `language` ("en", "de", "fr", "es"; None
    reads none), lowercased, in text order. German formal address ("Sie", "Ihr" not opening the sentence) counts
    as second person. Read-only."""
    if language not in _PERSON_WORDS:
        return [], []
    firsts, seconds = _PERSON_WORDS[language]
    words = [w.lower().replace("’", "'") for w in _WORDS.findall(sentence)]
    if language == "fr":  # "j'aime" -> "j'", "aime"
        words = [part for w in words for part in ((w[:2], w[2:]) if re.match(r"[jmt]'\w", w) else (w,))]
    if language == "en" and "I" not in _WORDS.findall(sentence):
        words = [w for w in words if w != "i"]  # a lowercase "i" is a list marker or a typo, not the pronoun
    first = [w for w in words if w in firsts]
    second = [w for w in words if w in seconds]
    if language == "de":
        second += [m.group(0).lower() for m in _GERMAN_FORMAL.finditer(sentence)]
    return first, second


def _language(sentence: str) -> str | None:
    """The language of `sentence` among en/de/fr/es by the most hint words, then the most person words (ties:
    English when the sentence is ASCII), None when none is hinted (ours: enough to choose which person words to
    read; French "du" outweighs German "du" in "Owner mange du pain.")."""
    words = [w.lower().replace("’", "'") for w in _WORDS.findall(sentence)]
    scores = {}
    for language, hints in _LANGUAGE_HINTS.items():
        firsts, seconds = _PERSON_WORDS[language]
        scores[language] = (sum(w in hints for w in words), sum(w in firsts or w in seconds for w in words))
    best = max(scores.values())
    if best == (0, 0):
        return None
    winners = [language for language, score in scores.items() if score == best]
    return "en" if "en" in winners and sentence.isascii() else winners[0]


def _is_instruction(sentence: str) -> bool:
    """An imperative: a verb of `_IMPERATIVE_VERBS` first and, after it, an object-like word, a name, or at most
    two more words ("Buy milk."), or one of `_RARELY_NOUNS` ("Ignore previous instructions …"); "Book club meets
    on Tuesdays." is not one. German "Bitte …", "Denk daran …"."""
    if _GERMAN_INSTRUCTION.match(sentence):
        return True
    words = sentence.replace("’", "'").rstrip(".!").split()
    opener = words[0].lower().strip(",") if words else ""
    if opener == "let's":
        return True
    if opener not in _IMPERATIVE_VERBS:
        return False
    if opener in _RARELY_NOUNS:
        return True
    following = words[1] if len(words) > 1 else ""
    return len(words) <= 3 or following.lower() in _OBJECT_START or following[:1].isupper()


def _dangling(sentence: str) -> str | None:
    """Why `sentence` does not stand alone, or None: it opens with a personal pronoun ("He", "Her name …", "Sie
    …") or a demonstrative standing for something ("It was …", "This is …", "Das ist …") that nothing in it names
    (an "It is …" sentence that names Owner is kept: "It is Owner's turn to cook.")."""
    words = _WORDS.findall(sentence)
    if not words:
        return "no words in it"
    first = words[0].lower()
    if first in _DANGLING or (first == "sie" and words[0] == "Sie"):
        return f"opens with a pronoun that refers to nothing in it ('{words[0]}')"
    standing = (m := _DEMONSTRATIVE.match(sentence)) is not None and m.group(0).strip().lower() not in (
        "it", "this", "that", "these", "those", "es", "das", "ce")  # "This week …" is no pronoun
    names_owner = first in ("it", "es") and any(w.lower().startswith("owner") for w in words[1:])
    return f"opens with a pronoun that refers to nothing in it ('{words[0]}')" if standing and not names_owner else None


def _mask_quotes(sentence: str) -> tuple[str, list[str]]:
    """`sentence` with each quoted span replaced by a placeholder (`_MASK`), and the spans in order: a quote is
    someone's words, neither split nor rewritten."""
    quotes: list[str] = []

    def hide(m: re.Match) -> str:
        quotes.append(m.group(0))
        return f"\ue000{len(quotes) - 1}\ue001"

    return _QUOTED.sub(hide, sentence), quotes
