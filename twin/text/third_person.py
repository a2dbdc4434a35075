"""First person -> "Owner": the rewrite that makes what the owner said a third-person memory (seed 000).

Seed 000: every memory is "one plain sentence in third person — 'Owner prefers dark roast over espresso'". The
owner's "I" becomes "Owner" in the language it was said in (no translation): English here, German in
`twin.text.third_person_de`, French in `twin.text.third_person_fr`; other languages are kept as written. `third_person()` is
the one entry point, shared by the offline extractor and the model path (a model answer in the first person is
rewritten the same way). The rules are ours; tests/test_third_person.py and bench/extraction_quality.py measure
them. Pure: no I/O, no state; linear in the sentence's length.
"""

from __future__ import annotations

import re

from twin.text import third_person_de, third_person_fr

__all__ = ["agree", "english_first_person", "first_to_third_person", "language_of", "looks_english",
           "second_to_third_person", "third_person"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_ADVERBS = ("just|really|always|never|usually|often|sometimes|also|still|actually|totally|absolutely|truly|rarely"
            "|seldom|generally|mostly|only|even|definitely|honestly|normally|typically|currently|already|recently"
            "|occasionally|constantly|literally|simply|strongly|mainly|genuinely|probably|certainly|barely|hardly"
            "|finally|personally|secretly|kinda|basically|now|then|so|kind of|sort of|no longer|no more|not yet")
_FIRST = re.compile(
    r"(?i)(?P<conj>\b(?:and|but|or)\s+)?(?<![\w/.'’-])(?:(?P<subj>I|we)(?:['’](?P<contr>m|re|ve|ll|d))?"
    r"|(?P<bare>im|ive))"  # chat spelling without the apostrophe: "im vegetarian", "ive been"
    rf"(?![\w/'’-]|\.\w)(?P<adv>(?:\s+(?:{_ADVERBS})\b)*)(?:\s+(?P<verb>[a-z]+(?:n['’]t)?)\b(?!['’]))?"
    r"|(?<![\w/'’-])(?P<obj>my|our|mine|ours|myself|ourselves|me|us)(?![\w/'’-])")
_COMPOUND = re.compile(  # "My wife and I …" / "Jonas and I …" / "Me and Jonas …" -> "Owner and …" (plural verb)
    r"(?:(?P<x>(?i:my|our)\s+\w+(?:\s+\w+)?|[A-Z]\w+)\s+and\s+(?i:I|me|we)"
    r"|(?i:I|me|we)\s+and\s+(?P<y>(?i:my|our)\s+\w+(?:\s+\w+)?|[A-Z]\w+))(?![\w'’])")
_CLAUSE_BREAK = re.compile(r"(?i)\b(?:he|she|they|who|which|that|is|are|was|were)\b|[;:]")
_CONTRACTED = {"m": "is", "re": "is", "ve": "has", "ll": "will", "d": "would", "im": "is", "ive": "has"}
_AGREE = {"am": "is", "are": "is", "were": "was", "be": "is", "have": "has", "do": "does", "go": "goes",
          "don't": "doesn't", "haven't": "hasn't", "aren't": "isn't", "weren't": "wasn't", "ain't": "isn't",
          # chat spelling without the apostrophe, given it back ("I dont" -> "Owner doesn't", never "donts")
          "dont": "doesn't", "havent": "hasn't", "arent": "isn't", "werent": "wasn't", "doesnt": "doesn't",
          "cant": "can't", "wont": "won't", "didnt": "didn't", "couldnt": "couldn't", "wouldnt": "wouldn't",
          "shouldnt": "shouldn't", "isnt": "isn't", "wasnt": "wasn't", "hadnt": "hadn't", "mustnt": "mustn't",
          "wanna": "wants to", "gotta": "has to", "gonna": "is going to", "hafta": "has to"}
_VERB_AS_IS = _words(  # modals and irregular past tenses: no -s after "Owner"
    "can could will would shall should may might must ought was did had and or but too not went got made saw took"
    " came knew thought told found gave felt left bought ate drank ran met began wrote read put cut set hit let quit"
    " spent sent lost won sat stood heard held kept slept woke swam flew drove rode broke chose spoke forgot became"
    " brought caught taught fought sold built paid said meant lent led fed fell grew threw wore understood agreed"
    " freed used hurt cost shut spread bet burst cast"
    # the other irregular simple pasts (a past that is also a base verb, "found", "lay", "saw", is read as the past,
    # by far the likelier after "I": "I found my keys")
    " arose awoke bore beat befell bent bid bit bled blew bred broadcast burnt clung crept dealt dug dove drew dreamt"
    " dwelt fled flung forbade forecast foresaw foretold forgave forsook froze ground hung hid knelt laid leant leapt"
    " learnt lay lit mistook misunderstood overcame overheard overslept overtook overthrew rid rang rose sought shook"
    " shed shone shot shrank sang sank slew slid slung slit smelt sped spelt spilt spun spat split spoilt sprang"
    " stole stuck stung stank strode struck strung strove swore swept swung tore trod undertook underwent upset"
    " wove wept wound withdrew withheld wrung")
_PRESENT_AS_IS = _words("quit put cut set hit let read hurt cost shut spread bet bid broadcast burst cast forecast rid"
                        " shed slit split thrust upset")
"""Verbs whose past and present look alike: a base verb coordinated after one is present ("quit … and drinks")."""
_BASE_VERBS = _words(  # base forms a coordinated verb may take ("… and drink green tea" -> "and drinks …")
    "drink eat cook bake read write work play run walk swim ride drive fly travel visit call text watch listen"
    " learn study teach speak talk sing dance paint draw knit sew garden grow plant build fix clean wash take"
    " make give get keep bring buy sell pay spend save love like hate enjoy prefer want need try use wear live"
    " stay sleep wake rest meditate pray go come leave move start stop finish help meet see hear feel think"
    " know believe hope plan wish miss forget remember collect hike climb cycle skate ski surf fish hunt shop"
    " order rent own share send carry open close hold sit stand smoke vape volunteer coach train lift jog row"
    " box climb sail camp host attend join follow skip avoid eat cook practise practice bike commute code"
    " program design manage lead run teach write edit translate care look check track log brew grill roast")
_AUXILIARIES = _words("does doesn't is isn't was wasn't hasn't") | {"wants to", "has to", "is going to"}
"""Agreed forms after which a verb is not coordinated to them ("doesn't smoke and drink")."""
_COORDINATED = re.compile(rf"(?i)\b(?:and|but|or)\s+(?P<adv>(?:(?:{_ADVERBS})\s+)*)(?P<verb>[a-z]+)\b(?=\s+\w)")
_KEEPS_BARE = re.compile(r"(?i)\b(?:to|will|would|can|could|should|shall|must|might|may|does|doesn't|didn't"
                         r"|won't|can't|not|never|let|help|make|makes|lets|helps)\b|[,;:]")
"""A word between the agreed verb and "and" after which the coordinated verb stays bare ("wants to travel and
learn", "doesn't smoke and drink"), or a comma (a new clause or a list)."""
_EN_HINTS = _words(  # common English words that are not function words of es/it/fr/pt/nl
    "the and my mine myself with have had was were am are been just really like love hate want need went this"
    " that it of for to from but not don't i'm i've i'll i'd we're we've our ourselves you they she his will can"
    " would should very since last yesterday today tomorrow week weekend weekends every before after about because"
    " when what all some get got make know think see work day time morning night always never often usually"
    " dont im ive cant wont didnt at got")
_FOREIGN_HINTS = _words(  # function words of the languages where "me", "i" or "we" are words too
    "el la los las que de del y es il di che e per sono le les des est et je tu vous nous une um uma não eu em het"
    " een ik niet zijn ho ha mi ti si lo gli miei mio mia con en por para muy pero al ao da das dos du ce ne pas"
    " ma anche io noi yo ella ele ela wij zij un nel nella della delle dei degli alla ai sul una uno questo questa"
    " non più molto perché quando dove sin porque cuando donde este esta hay son está dans sur avec pour mais très"
    " elle sont com muito mas na naar van voor maar ook hebben met op bij uit")
_EN_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?")
_PRONOUN_I = re.compile(r"(?i)(?<![\w'’])i(?![\w/-])")
_EN_FIRST_PERSON = re.compile(  # English-only first-person words; "I" not before an Italian plural ("I ragazzi")
    r"(?i:(?<![\w'])(?:my|mine|myself|our|ours|ourselves|i'(?:m|ve|ll|d)|we'(?:re|ve|ll|d))(?![\w'/-]))"
    r"|(?<![\w'])I(?![\w/-])(?!\s+[a-z]*i\b)")
_WORD = re.compile(r"[^\W\d_]+")
_NON_ASCII_LETTER = re.compile(r"[^\W\d_\x00-\x7f]")


def english_first_person(sentence: str) -> bool:
    """True when `sentence` holds an English first-person word (I, I'm, im, we, my, me, our, us, …) as a word."""
    return _FIRST.search(sentence) is not None


def language_of(sentence: str) -> str | None:
    """"de" or "fr" when `sentence` reads as German or French first person (`third_person_de.looks_german`,
    `third_person_fr.looks_french`), "en" when it holds English first person and reads as English
    (`looks_english`), else None (another language, or no first person: nothing to rewrite)."""
    if third_person_de.looks_german(sentence):
        return "de"
    if third_person_fr.looks_french(sentence):
        return "fr"
    if english_first_person(sentence) and looks_english(sentence):
        return "en"
    return None


def third_person(sentence: str, language: str | None = None) -> str:
    """`sentence` with the owner's first person written as "Owner" in `language` ("en", "de", "fr"; None: found
    by `language_of`); a sentence in another language, or with no first person, is returned as it is.
    "I dont like cilantro" -> "Owner doesn't like cilantro"; "Ich bin Vegetarier." -> "Owner ist Vegetarier.";
    "J'habite à Lyon." -> "Owner habite à Lyon."."""
    language = language or language_of(sentence)
    if language == "en":
        return _english(sentence)
    if language == "de":
        return third_person_de.rewrite(sentence)
    if language == "fr":
        return third_person_fr.rewrite(sentence)
    return sentence


def looks_english(sentence: str) -> bool:
    """Ours: rewrite only English: mostly ASCII letters and more English hint words (a lone "I" counts) than
    Spanish/Italian/French/Portuguese/Dutch ones, so "me gusta" or Italian "i miei" are never touched. On a tie
    an ASCII sentence (’ allowed) with an English-only first-person word (`_EN_FIRST_PERSON`: "my", "I'm", a
    capital "I" not before an Italian plural like "I ragazzi") is English: "de" and "per" are English words
    too ("My salary is 4000 euros per month", "pastel de nata")."""
    if not sentence.isascii():
        letters = sum(map(len, _WORD.findall(sentence)))
        if len(_NON_ASCII_LETTER.findall(sentence)) > 0.15 * letters:
            return False
    plain = sentence.replace("’", "'")
    words = _EN_TOKEN.findall(plain.lower())
    english = sum(word in _EN_HINTS for word in words) + len(_PRONOUN_I.findall(sentence))
    foreign = sum(word in _FOREIGN_HINTS for word in words)
    if english != foreign:
        return english > foreign
    return plain.isascii() and _EN_FIRST_PERSON.search(plain) is not None


def _english(sentence: str) -> str:
    """English first person -> "Owner" (ours). I/we -> Owner with the verb agreed; "and/but/or I" after an
    Owner clause drops the subject; my/our -> Owner's, then their; me/us -> Owner; mine/ours -> Owner's, then
    theirs; myself/ourselves -> themselves. All-caps object words (US, ME) are left alone. A base verb joined by
    and/but/or to a verb agreed in the present takes the -s too ("quit coffee and drinks green tea")."""
    if compound := _COMPOUND.match(sentence):
        sentence = "Owner and " + (compound["x"] or compound["y"]) + sentence[compound.end():]
    state = {"named": sentence.startswith("Owner "), "subject_end": -1, "shift": 0}
    present: list[int] = []  # where a verb agreed in the present ends, in the output

    def replace(m: re.Match) -> str:
        out = _replace(m)
        agreed = agree(m["verb"]) if m["verb"] and not m["obj"] and not (m["contr"] or m["bare"]) else ""
        if agreed and agreed.lower() not in _AUXILIARIES and (agreed != m["verb"]
                                                              or agreed.lower() in _PRESENT_AS_IS):
            present.append(m.start() + state["shift"] + len(out))
        state["shift"] += len(out) - len(m.group())
        return out

    def _replace(m: re.Match) -> str:
        if m["obj"]:
            if len(m["obj"]) > 1 and m["obj"].isupper():
                return m["obj"]
            word, named = m["obj"].lower(), state["named"]
            state["named"] = True
            if word in ("myself", "ourselves"):
                return "themselves"
            if word in ("me", "us"):
                return "Owner"
            return ("their" if named else "Owner's") if word in ("my", "our") else ("theirs" if named else "Owner's")
        adverbs, verb = m["adv"] or "", m["verb"]
        contraction = (m["contr"] or m["bare"] or "").lower()
        aux = " " + _CONTRACTED[contraction] if contraction else ""
        if aux == " would" and verb and verb.lower() in ("been", "better"):
            aux = " had"
        verb_out = " " + (verb if contraction else agree(verb)) if verb else ""
        conj = m["conj"] or ""
        elide = bool(conj) and state["subject_end"] >= 0 and not _CLAUSE_BREAK.search(
            m.string, state["subject_end"], m.start())
        state.update(named=True, subject_end=m.end())
        return conj + (aux + adverbs + verb_out).lstrip() if elide else conj + "Owner" + aux + adverbs + verb_out

    out = _FIRST.sub(replace, sentence)
    for end in reversed(present):
        out = _agree_coordinated(out, end)
    return out


def _agree_coordinated(out: str, start: int) -> str:
    """`out` with the first "and/but/or <base verb>" after offset `start` (the end of a verb agreed in the
    present) agreed, when no word of `_KEEPS_BARE` or comma stands between ("drinks coffee and reads" but
    "wants to travel and learn")."""
    m = _COORDINATED.search(out, start)
    if m is None or m["verb"].lower() not in _BASE_VERBS or _KEEPS_BARE.search(out, start, m.start()):
        return out
    verb = m["verb"]
    agreed = verb + "s" if verb.lower() in _PRESENT_AS_IS else agree(verb)  # "… and reads the news"
    return out[:m.start("verb")] + agreed + out[m.end("verb"):]


def agree(verb: str) -> str:
    """Simple-present third-person form of a verb that followed "I"/"we"; past tenses and modals unchanged;
    contractions written without the apostrophe get it back ("dont" -> "doesn't", "cant" -> "can't")."""
    low = verb.lower().replace("’", "'")
    if low in _AGREE:
        out = _AGREE[low]
    elif low in _VERB_AS_IS or "'" in low or (low.endswith("ed") and not low.endswith("eed")) or (
            low[-1] == "s" and low[-2:] not in ("ss", "us")):
        return verb
    elif low.endswith(("s", "sh", "ch", "x", "z", "o")):
        out = low + "es"
    elif low.endswith("y") and low[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        out = low[:-1] + "ies"
    else:
        out = low + "s"
    return out.upper() if verb.isupper() and len(verb) > 1 else out


# --- English second person -> "Owner" (the model's memories, `twin.learn.sentence_contract`) ------------------------
_CLAUSE_OPENER = ("and|but|or|nor|so|that|because|when|whenever|if|unless|while|since|although|though|where|as"
                  "|until|once|before|after")
_NOT_A_VERB = _words("a an the this that these those my your his her its our their some any no every each all to about"
                     " for with from at in on of by up down out back off over again there here today tomorrow"
                     " yesterday and or but so too as than if when how what why where who which")
_PREPOSITION = re.compile(r"(?i)\b(?:to|with|for|about|at|from|of|by|on|in|into|without|like|than|near|behind"
                          r"|after|before|around|against|between|among|toward|towards|upon|via|per)\s+$")
_SECOND = re.compile(
    rf"(?i)(?P<lead>(?:^|[,;:(\"“]\s*|\b(?:{_CLAUSE_OPENER})\s+))?(?<![\w'’-])(?P<subj>you)"
    r"(?:['’](?P<contr>re|ve|ll|d))?(?![\w'’-])"
    rf"(?P<adv>(?:\s+(?:{_ADVERBS})\b)*)(?:\s+(?P<verb>[a-z]+(?:n['’]t)?)\b(?!['’]))?"
    r"|(?<![\w'’-])(?P<obj>your|yours|yourself|yourselves)(?![\w'’-])")
_AUXILIARY_BEFORE = re.compile(r"\b(?:[Dd]o|[Dd]oes|[Dd]id|[Cc]an|[Cc]ould|[Ww]ill|[Ww]ould|[Ss]hall|[Ss]hould"
                               r"|may|might|[Mm]ust|to)\s+$")  # "may", not the month "May"
"""An auxiliary right before "you": the verb after it keeps its bare form ("did you get" -> "did Owner get")."""
_SECOND_COMPOUND = re.compile(r"(?i:you)\s+and\s+(?P<x>(?i:your)\s+\w+|[A-Z]\w+)(?![\w'’])"
                              r"|(?P<y>(?i:your)\s+\w+|[A-Z]\w+)\s+and\s+(?i:you)(?![\w'’])")


def second_to_third_person(sentence: str) -> str:
    """English second person -> "Owner" (ours, for memories a model wrote to the owner: "You have a dog called
    Rex." -> "Owner has a dog called Rex."). "you" opening a clause (the sentence start, after a comma or
    and/but/that/because/when/if …) is the subject: "Owner" with the verb agreed
    (`agree`: "you are" -> "Owner is", "you don't" -> "Owner doesn't"; you're/you've/you'll/you'd -> Owner
    is/has/will/would), and so is a "you" before a word that can be a verb, unless a preposition comes before it
    ("said you love" -> "said Owner loves"); another "you" is an object ("gave you a book", "with you") ->
    "Owner"; your -> Owner's, then their; yours -> Owner's,
    then theirs; yourself -> themselves. "You and Lena …" / "Lena and you …" -> "Owner and Lena …" (the verb
    stays plural). Text in other languages is not touched by the caller (`twin.learn.sentence_contract`). Pure; never
    raises; linear in `len(sentence)`."""
    if compound := _SECOND_COMPOUND.match(sentence):
        sentence = "Owner and " + (compound["x"] or compound["y"]) + sentence[compound.end():]
    state = {"named": sentence.startswith("Owner ")}

    def replace(m: re.Match) -> str:
        if m["obj"]:
            word, named = m["obj"].lower(), state["named"]
            state["named"] = True
            if word.startswith("yoursel"):
                return "themselves"
            return ("their" if named else "Owner's") if word == "your" else ("theirs" if named else "Owner's")
        lead, adverbs, verb, contraction = m["lead"], m["adv"] or "", m["verb"], (m["contr"] or "").lower()
        state["named"] = True
        if contraction:
            aux = " " + _CONTRACTED[contraction]
            if aux == " would" and verb and verb.lower() in ("been", "better"):
                aux = " had"
            return (lead or "") + "Owner" + aux + adverbs + (" " + verb if verb else "")
        subject = lead is not None or (verb is not None and verb.lower() not in _NOT_A_VERB and not verb[0].isupper()
                                       and not _PREPOSITION.search(m.string, 0, m.start()))
        if subject and verb is not None and _AUXILIARY_BEFORE.search(m.string, 0, m.start()):
            return (lead or "") + "Owner" + adverbs + " " + verb  # "did you get" -> "did Owner get"
        if not subject or verb is None:
            return (lead or "") + "Owner" + m.group(0)[len(lead or "") + 3:]
        return lead + "Owner" + adverbs + " " + agree(verb) if lead is not None else "Owner" + adverbs + " " + agree(
            verb)

    return _SECOND.sub(replace, sentence)


def first_to_third_person(sentence: str) -> str:
    """English first person -> "Owner" (the rule the offline extractor uses: "I'm vegetarian." -> "Owner is
    vegetarian.") when the sentence reads as English (`looks_english`), else `sentence` unchanged. Pure; never
    raises."""
    return _english(sentence) if looks_english(sentence) else sentence
