"""The prose of one email body, in the language it is written in: which language (`guess_language`), its
sentences (`body_sentences`) and which of them are only the wrapping of a mail (`is_greeting`, `is_sign_off`,
`is_filler`, `is_boilerplate`): salutations, sign-offs and pleasantries in English, German, French, Spanish,
Italian, Dutch and Portuguese; disclaimers, footers, "view in browser" and unsubscribe lines; the signature block
after a sign-off.

Sentences come from sentencex (Wikimedia's rule-based segmenter, per-language abbreviation lists), with three
repairs measured on our mail corpus (tests/email_corpus.py): a German ordinal or date ("am 15. Dezember", "der 3.
Versuch") is not a sentence end, nor an abbreviation sentencex does not list ("Mme.", "inkl.", "9.30 h."), nor a
dot before a digit. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import sentencex

LANGUAGES = ("en", "de", "fr", "es", "it", "nl", "pt")
"""Languages `guess_language` tells apart (the salutations and sign-offs below cover each)."""

_FUNCTION_WORDS = {
    "en": "the and to of is are you your for with this that have will be on at it we our please thanks can would",
    "de": "der die das und ist sind sie ihr ihnen ich wir nicht mit für auf bitte vielen dank ein eine den dem zu "
          "wird haben wie auch am uns gerne bei",
    "fr": "le la les et est sont vous votre nous je pour avec une des du ce pas merci au dans sur bien qui que "
          "cordialement mon ma",
    "es": "el la los las y es son usted su nosotros yo para con una del por gracias que muy en al se lo le mi tu",
    "it": "il lo gli e è sono lei suo noi io per con una del che grazie non della alla sul mi ti",
    "nl": "de het een en is zijn u uw wij ik voor met niet dank op van aan ook bij je",
    "pt": "o os as e é são você seu nós eu para com uma do da por obrigado não em ao mas",
}
_FUNCTION_SETS = {language: frozenset(words.split()) for language, words in _FUNCTION_WORDS.items()}
_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def guess_language(text: str) -> str:
    """The language of `text` as an ISO 639-1 code from `LANGUAGES`, by counting function words in its first 2000
    characters (ours: mail is short, and these seven differ in their commonest words); "en" when nothing counts.
    A tie goes to the language listed first."""
    counts = dict.fromkeys(LANGUAGES, 0)
    for token in _TOKEN.findall(text[:2000].lower()):
        for language, words in _FUNCTION_SETS.items():
            counts[language] += token in words
    best = max(LANGUAGES, key=lambda language: counts[language])
    return best if counts[best] else "en"


# --- sentences -------------------------------------------------------------------------------------------------

ORDINAL_DOT_LANGUAGES = frozenset("de da no nb fi cs sk pl hu sl hr sr et lv lt tr is".split())
"""Languages that write an ordinal as a number and a dot ("15. Dezember", "3. kerros")."""
MONTHS = (  # en, de, fr, es, it, nl, pt; with common abbreviations
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec "
    "januar jänner februar märz mai juni juli oktober dezember okt dez mrz "
    "janvier février mars avril juin juillet août septembre octobre novembre décembre janv févr avr juil déc "
    "enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre diciembre ene abr ago "
    "dic gennaio febbraio aprile maggio giugno luglio settembre ottobre dicembre januari februari maart mei augustus "
    "janeiro fevereiro março maio junho julho setembro outubro novembro dezembro").split()
_ABBREVIATIONS = frozenset((
    "mr mrs ms dr prof st no nr nro vol fig ca approx etc e.g i.e eg ie cf vs tel fax str hr fr frl abs abt bspw bzw "
    "ca ggf evtl inkl exkl zzgl mwst usw sog vgl ff z.b d.h u.a o.ä mme mlle m me mm p.ex ex sr sra srta dra ud uds "
    "n núm tfno pág av avda h min sek std mo di mi do sa so mon tue wed thu fri sat sun sig dott sig.ra").split())
_ORDINAL_BEFORE = frozenset(
    "am im zum zur vom bis ab seit vor nach ca zu der die das den dem des ein eine einen einem einer jeden jedes jede "
    "mein meine meinen meinem meiner dein deine deinen sein seine seinen seinem ihr ihre ihren ihrem unser unsere "
    "unseren unserem euer eure".split())
"""German words after which "<day or ordinal>." goes on ("am 15. Dezember", "ihren 40. Geburtstag")."""
_TAIL_NUMBER = re.compile(r"(?:^|\s)(\S*?)\s*\b(\d{1,2})\.\s*$")
_TAIL_TOKEN = re.compile(r"(?:^|[\s(])([^\s(]{1,12})\.\s*$")
_MONTH_START = re.compile(r"\s*(?i:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\b")


def body_sentences(text: str, language: str) -> list[str]:
    """The sentences of a mail body in text order, whitespace collapsed, empty ones left out. A line of its own
    ends a sentence (mail is written in lines: lists, "When: …", signature lines) unless it ends with "," or
    the next line starts with a lower-case letter (a hard wrap). Never raises."""
    out: list[str] = []
    for block in _blocks(text):
        pieces = [piece.strip() for piece in sentencex.segment(language, block) if piece.strip()]
        out.extend(_repaired(pieces, language))
    return out


def _blocks(text: str) -> Iterator[str]:
    current: list[str] = []
    for line in (" ".join(raw.split()) for raw in text.split("\n")):
        if not line:
            if current:
                yield " ".join(current)
                current = []
            continue
        if current and not _wrapped(current[-1], line):
            yield " ".join(current)
            current = []
        current.append(line)
    if current:
        yield " ".join(current)


_LINE_END = re.compile(r"[.!?…:;)\"'»”’]$")
WRAP_MIN_CHARS = 50
"""A line this long without end punctuation is taken as hard-wrapped when another line follows (ours: mail
clients wrap at 72-78 characters; signature and list lines are shorter)."""


def _wrapped(previous: str, line: str) -> bool:
    """Whether `line` continues the sentence of `previous` (a comma, a hard wrap, a lower-case start)."""
    if previous.endswith(","):
        return True
    return not _LINE_END.search(previous) and (line[:1].islower() or len(previous) >= WRAP_MIN_CHARS)


def _repaired(pieces: list[str], language: str) -> list[str]:
    """Pieces joined back where sentencex cut after an ordinal, an abbreviation or before a lower-case word."""
    out: list[str] = []
    for piece in pieces:
        if out and _joins(out[-1], piece, language):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def _joins(before: str, after: str, language: str) -> bool:
    if not before.endswith("."):
        return False
    first = after[:1]
    if first.isdigit() or first in "º°ª%€$£":
        return True
    number = _TAIL_NUMBER.search(before)
    if number is not None and (_MONTH_START.match(after) or (
            language in ORDINAL_DOT_LANGUAGES and number.group(1).lower() in _ORDINAL_BEFORE)):
        return True
    token = _TAIL_TOKEN.search(before)
    if token is None:
        return False
    word = token.group(1).strip("\"'“‘(").lower()
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())


# --- the wrapping of a mail ------------------------------------------------------------------------------------

_GREETING_WORDS = (
    r"hi|hello|hey|hiya|dear|greetings|good (?:morning|afternoon|evening|day)|morning|yo"
    r"|hallo|hallöchen|liebe[rs]?|sehr geehrte[rs]?|guten (?:tag|morgen|abend)|moin(?: moin)?|servus|grüß gott"
    r"|grüezi|grüß dich|bonjour|bonsoir|salut|coucou|cher|chère|chers|chères|madame|monsieur|mesdames"
    r"|hola|estimad[oa]s?|querid[oa]s?|buen(?:os|as) (?:días|tardes|noches)|buen día|distinguid[oa]s?"
    r"|ciao|caro|cara|cari|gentile|gentili|salve|buongiorno|buonasera|beste|geachte|hoi|dag|olá|prezad[oa]s?|oi")
_TITLE_DOT = r"\b(?:dr|sr|sra|srta|mr|mrs|ms|prof|hr|fr|mme|st|dott)\."
_GREETING_LINE = re.compile(rf"(?i)(?:{_GREETING_WORDS})\b(?:{_TITLE_DOT}|[^.!?]){{0,60}}?[,:!]?")
_GREETING_CLAUSE = re.compile(rf"(?i)^(?:{_GREETING_WORDS})\b[^,!:.?]{{0,40}}[,!:]\s+")
_SIGN_OFF_WORDS = (
    r"(?:best|kind|warm|warmest|many|with)?\s*regards|best(?: wishes)?|all the best|cheers|sincerely|yours"
    r"(?: sincerely| faithfully| truly)?|warmly|take care|talk soon|speak soon|see you(?: soon)?|love|xx+|thx"
    r"|(?:mit )?(?:freundlichen|freundlichem|besten|herzlichen|lieben|vielen|schönen|sonnigen)"
    r" gr(?:ü|ue|u)(?:ß|ss)(?:en|e)?"
    r"|(?:freundliche|beste|liebe|herzliche|viele|schöne) gr(?:ü|ue)(?:ß|ss)e|gr(?:ü|ue|u)(?:ß|ss)e?|lg|vg|mfg|bg"
    r"|bis (?:bald|dann|später)|hochachtungsvoll|tschüss|ciao"
    r"|(?:bien )?cordialement|bien à (?:vous|toi)|(?:sincères |meilleures )?salutations|amicalement|bises|bisous"
    r"|à (?:bientôt|plus)|bonne (?:journée|soirée|fin de journée)|respectueusement"
    r"|(?:un )?saludos?(?: cordiales)?|atentamente|cordialmente|un (?:fuerte )?abrazo|abrazos|besos"
    r"|hasta (?:pronto|luego)"
    r"|nos vemos|reciba un cordial saludo|(?:cordiali|distinti) saluti|saluti|un saluto|a presto"
    r"|met vriendelijke groet(?:en)?|(?:hartelijke )?groet(?:en)?|atenciosamente|abraços|beijos")
_NAME_AFTER = (r"(?:[,!.]?\s*(?:(?i:aus|from|de|desde|da|von|und|and|et|y|e)\s+)?"
               r"[A-ZÄÖÜÉ][\w.'’-]*(?:\s+[A-ZÄÖÜÉ][\w.'’-]*){0,2})?")
"""What may follow a sign-off on its line: a name or a place of up to three capitalised words ("Cheers, Bob",
"Viele Grüße aus Berlin")."""
_SIGN_OFF_LINE = re.compile(rf"(?i:{_SIGN_OFF_WORDS}){_NAME_AFTER}[,.!]?")
_THANKS_LINE = re.compile(r"(?i)(?:many |big )?thanks?(?: you)?(?: (?:so|very) much)?(?: again| in advance)?"
                          r"|(?:vielen |herzlichen |besten )?dank(?:e)?(?: (?:schön|sehr|im voraus|euch|dir|ihnen))?"
                          r"|merci(?: beaucoup| d'avance| par avance)?|(?:muchas )?gracias(?: de antemano)?|grazie"
                          r"|bedankt|obrigad[oa]")
_FORMAL_CLOSE = re.compile(r"(?i)\b(?:veuillez agréer|je vous prie d['’]agréer|recevez,? .{0,40}salutations"
                           r"|quedo a (?:la|su) (?:espera|disposición)|in erwartung ihrer antwort)")


def is_greeting(line: str) -> bool:
    """A salutation line alone ("Dear Mr Taylor,", "Sehr geehrte Damen und Herren,", "Hola Carmen:"), at most
    8 words."""
    return len(line.split()) <= 8 and _GREETING_LINE.fullmatch(line.strip()) is not None


def without_greeting(sentence: str) -> str:
    """A sentence with its leading salutation clause cut ("Hi Sam, can you …" -> "Can you …"); the sentence
    itself when nothing follows the salutation."""
    rest = _GREETING_CLAUSE.sub("", sentence, count=1).strip()
    return rest[:1].upper() + rest[1:] if rest else sentence


def is_sign_off(line: str) -> bool:
    """A closing line ("Best regards,", "Mit freundlichen Grüßen", "Un saludo, Carmen", "Thanks!") of at most 7
    words, or a formal closing formula ("Veuillez agréer …") of any length."""
    text = line.strip().rstrip(",.!")
    words = len(text.split())
    if _FORMAL_CLOSE.search(text):
        return True
    if words <= 4 and _THANKS_LINE.fullmatch(text):
        return True
    return words <= 7 and _SIGN_OFF_LINE.fullmatch(text) is not None


_FILLER = re.compile(
    r"(?i)^(?:i )?hope (?:you(?:['’]re| are)|this (?:email |mail |message )?finds you|all is|everything is|you had)"
    r"|^how are you|^how(?:['’]s| is) it going|^thanks? (?:you )?(?:so much |very much )?(?:for (?:your|the) "
    r"(?:e-?mail|message|mail|note|reply|quick reply|response|enquiry|inquiry|patience|time|help|order)|again)"
    r"|^(?:please )?(?:do not|don['’]t) hesitate to|^(?:let me know|feel free to (?:contact|reach)|please let me know)"
    r" if (?:you )?(?:have|need) any|^if you have any (?:questions|problems)|^(?:any|for any) questions"
    r"|^ich hoffe,? (?:es geht (?:ihnen|dir|euch) gut|sie hatten|du hattest|alles ist)|^wie geht(?:['’]s| es)"
    r"|^(?:vielen |herzlichen |besten )?dank für (?:ihre|deine|eure|die) (?:e-?mail|mail|nachricht|anfrage"
    r"|rückmeldung|bestellung|geduld)|^(?:bei fragen|für (?:rückfragen|fragen)) stehe|^zögern sie nicht"
    r"|^melden sie sich gerne(?:,)? (?:bei fragen|wenn)"
    r"|^j['’]espère que (?:vous allez|tu vas|tout va) bien|^comment (?:allez-vous|vas-tu|ça va)"
    r"|^merci (?:beaucoup )?(?:pour|de) (?:votre|ton|vos|tes) (?:message|mail|e-mail|réponse|commande|patience)"
    r"|^n['’]hésitez pas|^(?:pour|si vous avez) (?:toute|des) questions?"
    r"|^espero que (?:estés|esté|estéis|te encuentres|se encuentre) bien|^¿?(?:qué tal|cómo estás|cómo está)"
    r"|^(?:muchas )?gracias por (?:tu|su|vuestro) (?:correo|mensaje|email|respuesta|pedido|paciencia)"
    r"|^no (?:dudes|dude) en|^(?:si tienes|si tiene) (?:alguna|cualquier) (?:pregunta|duda)")


def is_filler(sentence: str) -> bool:
    """A pleasantry that carries nothing to remember ("I hope you are well.", "Vielen Dank für Ihre Nachricht.",
    "N'hésitez pas à me contacter.", "Let me know if you have any questions.")."""
    return _FILLER.search(sentence.strip(" \"'“‘")) is not None


_BOILERPLATE = re.compile(
    r"(?i)\bconfidential|intended (?:only )?for the (?:named |intended )?(?:addressee|recipient)"
    r"|received this (?:e-?mail|message|communication) in error|if you are not the intended"
    r"|vertraulich|nicht der (?:richtige|vorgesehene|beabsichtigte) (?:adressat|empfänger)|irrtümlich erhalten"
    r"|confidentiel|destinataire|par erreur|confidencial|destinatario|por error|riservat[oa]|destinatari"
    r"|unsubscribe|abbestellen|abmelden|newsletter abbestellen|désabonner|désinscri|darse de baja|dar(?:te|se) de baja"
    r"|cancelar (?:la |tu )?suscripción|disiscriviti|afmelden|uitschrijven"
    r"|view (?:this (?:e-?mail|message) )?in (?:your |a )?(?:web )?browser|having trouble (?:viewing|reading)"
    r"|im browser (?:ansehen|anzeigen|öffnen|lesen)|(?:afficher|voir) (?:ce message |cet e-mail )?dans (?:le|votre) "
    r"navigateur|ver (?:este correo |el correo )?en (?:el|tu|su) navegador"
    r"|privacy (?:policy|notice|statement)|datenschutz|politique de confidentialité|política de privacidad"
    r"|all rights reserved|alle rechte vorbehalten|tous droits réservés|todos los derechos reservados|©|\(c\) \d{4}"
    r"|\bimpressum\b|handelsregister|amtsgericht|geschäftsführer(?:in)?:|ust-?id|\bhrb \d|registered (?:office|in)"
    r"|company (?:no|number|registration)|siège social|\brcs\b|\bsiret\b|\bcif\b:? ?[a-z]\d"
    r"|think before you print|consider the environment|bitte denken sie an die umwelt"
    r"|you (?:are )?receiv(?:e|ing) this (?:e-?mail|message|newsletter)|this (?:e-?mail|message) was sent (?:to|by)"
    r"|sie erhalten diese (?:e-?mail|nachricht|newsletter)|vous recevez (?:cet|ce) (?:e-?mail|message|courriel)"
    r"|(?:recibes|recibe) este (?:correo|mensaje)|manage (?:your )?(?:preferences|subscription|email settings)"
    r"|(?:do not|don['’]t|please do not) reply to this|nicht auf diese (?:e-?mail|nachricht) antworten"
    r"|ne (?:pas )?répondre à ce|no (?:responda|respondas|conteste) a este|\[image:|\[cid:|tracking pixel"
    r"|^(?:tel|phone|fax|mobile|mob|cell|telefon|handy|tél|móvil|tfno)\.?\s*[:+(]")


def is_boilerplate(sentence: str) -> bool:
    """A disclaimer, footer, unsubscribe or "view in browser" line, a legal notice, an image placeholder left by
    a tracking pixel ("[image: …]"), a contact line of a signature, or a sentence that is mostly a link."""
    if _BOILERPLATE.search(sentence):
        return True
    links = sum(len(m) for m in re.findall(r"(?:https?://|www\.)\S+|<[^<>\s]+>|\S+@\S+\.\w+", sentence))
    return links > 0.5 * len(sentence)
