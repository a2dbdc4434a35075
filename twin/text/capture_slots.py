"""Slots: which attribute of whom a memory states (`(subject, attribute)`, e.g. `("owner", "home city")`), so that
a new value replaces an old one only in the same slot (ours; the recall side of slot keys is not built yet).

`twin.text.capture_rules.relate` reads relations by their verbs, and a verb is shared by different attributes:
"moved" is said of a home, of bank accounts and of a dentist appointment, and "Owner moved their accounts from
one bank to another." hid where Owner lives. Here an attribute is named only by the words that say which one
it is: "lives in" / "moved to <a place>" / "wohnt in" (home city), "works at" / "arbeitet bei" (employer),
"banks with" / "moved their accounts to" (bank), "Owner's rent is" / "Owners Miete beträgt" (rent), …
(`_SLOTS`), or "Owner's <noun phrase> is …" / "Owners <Nomen> ist …" (that noun phrase). A number change
counts only between statements of a state (`is_state`): not an event in the past tense, and no time of its
own (a date, a weekday, a clock time, "today", "last night"). English and German; other text has no slot.

Three classes of slot more (English), for recall's ranking only (`slot_of`, `read_slots(classes=True)`): a person in
a role ("sees physiotherapist …", "'s dentist is …"), the place of an activity done now ("climbs at …", "plays
tennis at …"), a language's level ("'s German is at A2", "holds certified B1 German"). Recall ranks the newest value
of such a slot above older ones; capture does not supersede on them (`slot_change`): the older memory still answers
a question about the person or the place (measured on the personal dev set: superseding on them hid the only memory
of a former physiotherapist, while ranking the newest first took "stale above newest" from 0.200 to 0.067 at the
same Recall@5; bench/eval_recall.py). Pure: no I/O, no state.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from twin.text.capture_rules import PARSED_CACHE, tokens
from twin.text.secret_fields import names_secret
from twin.text.third_person import third_person

__all__ = ["NAMED_ATTRIBUTES", "Slot", "is_state", "read_slot", "read_slots", "slot_change", "slot_of"]

_KIN = ("sister|brother|mother|mum|mom|father|dad|wife|husband|partner|girlfriend|boyfriend|son|daughter|cousin"
        "|aunt|uncle|friend|colleague|neighbour|neighbor|parents|schwester|bruder|mutter|vater|frau|mann|sohn"
        "|tochter|freundin|freund|partnerin|eltern|kollege|kollegin|nachbar|nachbarin")
_SUBJECT = re.compile(rf"^(?i:owner)(?:(?:'s|s) (?P<kin>(?i:{_KIN}))(?: (?P<name>[A-ZÀ-Þ][\w-]+))?(?= ))?")
_COPULA_NEXT = re.compile(r"^(?:is|ist|heißt) ")  # "Owner's girlfriend is Lena": an attribute of Owner
_NOT_PLACE = ("team|role|job|position|shift|department|project|plan|tariff|bank|account|accounts|provider|version"
              "|company|school|class|course|desk|meeting|appointment|flat|apartment|house|room|office|floor")
_TITLE = ("engineer|developer|lead|designer|scientist|researcher|consultant|cto|ceo|founder|director|analyst"
          "|nurse|teacher|doctor|lawyer|architect|accountant")
_SLOTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((attribute, re.compile(pattern)) for attribute, pattern in (
    ("home city", rf"^(?:now |still |currently )?(?:lives|resides) in (?!(?:a |an |the )?(?:[\w-]+ ){{0,3}}?"
                  rf"(?:{_NOT_PLACE})\b)"
                  rf"|^(?:has )?(?:moved|relocated)(?: back| away)?(?: from [\w-]+(?: [\w-]+)?)? to "
                  rf"(?!(?:a |an |the |another |new |their |owner's )*(?:{_NOT_PLACE})\b)"
                  r"|^(?:wohnt|lebt)(?: jetzt| nun| inzwischen| seit [\w.]+)* in "
                  r"|^ist (?:jetzt )?nach (?=[\w-]+ (?:um)?gezogen)|^zieht nach "),
    ("address", r"^(?:now )?lives (?=(?:with [^,]+? )?(?:at |in an? (?:[\w-]+ ){0,3}?(?:flat|apartment|house|room)\b))"
                r"|^'s (?:home )?address is "),
    ("job", rf"^(?:now )?works as |^(?:started|is employed|employed) as |^joined [^,]+? as "
            r"|^(?:started|took|began|has) (?:a )?(?:new )?(?:job|position|role) as "
            rf"|^is (?:now )?(?:an? |the )?(?=(?:[\w-]+ ){{0,3}}?(?:{_TITLE})\b)"
            r"|^arbeitet(?: jetzt| nun)* als |^ist von beruf "),
    ("employer", r"^(?:now )?works (?:as [^,]+? )?(?:at|for) |^(?:quit|left) (?=\S)|^joined (?=[^,]+? as )"
                 r"|^(?:started|is employed|employed) (?:working |as [^,]+? )?(?:at|by) "
                 r"|^(?:started|took|began|has) (?:a )?(?:new )?(?:job|position|role)(?: as [^,]+?)? (?:at|with) "
                 r"|^arbeitet(?: jetzt| nun| seit [\w.]+)* (?:als [\w-]+ )?(?:bei|für) "),
    ("manager", r"^'s (?:new |current |line )?(?:manager|boss|chef|chefin)(?: at [\w-]+(?: [\w-]+)?)?"
                r" (?:is|ist|heißt) "
                r"|^reports (?:directly )?to "),
    ("partner", r"^(?:is|has been) (?:now )?(?:dating|married to|engaged to|in a relationship with) "
                r"|^'s (?:girlfriend|boyfriend|partner|wife|husband|fiancee?|freundin|freund|partnerin)"
                r" (?:is|ist|heißt) |^and (?=[\w-]+ (?:broke up|split up|divorced|separated)\b)"
                r"|^ist mit (?=[\w-]+ (?:zusammen|verheiratet))"),
    ("diet", r"^(?:is|became|turned|went) (?:now |no longer |not )?(?:a )?(?=vegetarian|vegan|pescatarian|omnivore)"
             r"|^(?=eats (?:meat|fish|everything)\b)|^started eating (?=meat|fish)"
             r"|^(?:ist|wurde) (?:jetzt |kein |keine )?(?=vegetarier|veganer|vegan\b)|^(?=isst (?:wieder )?fleisch)"),
    ("phone number", r"^'s (?:phone|mobile|cell) number is |^'s (?:handynummer|telefonnummer) (?:ist|lautet) "),
    ("phone", r"^(?:uses|has|owns|carries|nutzt|benutzt|hat) (?:an? |ein )(?=(?:\S+ ){0,2}?(?:phone|smartphone"
              r"|iphone|pixel|galaxy|fairphone|handy)\b)|^'s (?:phone|handy) (?:is|ist) "),
    ("car", r"^drives (?=an? )|^'s car is |^fährt (?=einen |ein )|^'s auto ist "),
    ("code editor", r"^(?:writes code|codes|programs) in |^'s (?:code )?editor is "
                    r"|^uses (?=[\w. +-]+? as (?:their|his|her|a|the) (?:code |text )?editor\b)"),
    ("bank", r"^banks with |^'s bank (?:is|ist) |^moved (?:their|owner's|all|its) (?:bank )?(?:accounts?|savings"
             r"|money)(?: from [\w-]+)? to |^switched banks? to |^hat (?:seine|ihre) konten (?:von der [\w-]+ )?zur? "),
    ("rent", r"^'s (?:monthly )?rent (?:is|ist|beträgt) |^pays (?=(?:\S+ ){1,5}?rent\b)|^'s miete (?:ist|beträgt) "),
    ("salary", r"^'s .{0,60}?\b(?:salary|gehalt)\b.*?\b(?:is|of|rose to|went up to|ist|beträgt|von) "
               r"|^earns |^verdient "),
    ("age", r"^is (?=\d+ years? old\b)|^ist (?=\d+ jahre alt\b)"),
    ("weight", r"^weighs |^'s weight is |^wiegt "),
))
# --- slots of a class: a person in a role, where an activity is done, a language's level ----------------------------
_ROLES = {"physiotherapist": "physiotherapist", "physio": "physiotherapist", "physical therapist": "physiotherapist",
          "therapist": "therapist", "psychotherapist": "therapist", "psychologist": "therapist",
          "counsellor": "therapist", "counselor": "therapist", "dentist": "dentist", "orthodontist": "orthodontist",
          "doctor": "doctor", "gp": "doctor", "family doctor": "doctor", "general practitioner": "doctor",
          "dermatologist": "dermatologist", "gynaecologist": "gynaecologist", "gynecologist": "gynaecologist",
          "optician": "optician", "osteopath": "osteopath", "chiropractor": "chiropractor", "midwife": "midwife",
          "coach": "coach", "personal trainer": "personal trainer", "trainer": "personal trainer",
          "tutor": "tutor", "mentor": "mentor", "hairdresser": "hairdresser", "barber": "barber", "vet": "vet",
          "landlord": "landlord", "landlady": "landlord", "accountant": "accountant", "lawyer": "lawyer",
          "tax advisor": "tax advisor", "cleaner": "cleaner", "babysitter": "babysitter", "nanny": "nanny"}
"""A person the owner sees in a role, by the words that name the role (the attribute is the value: "physio" and
"physical therapist" are one role)."""
_ROLE = "|".join(sorted(_ROLES, key=len, reverse=True))
_NAME = r"(?P<name>(?:dr\.? |frau |herr |mr\.? |mrs\.? |ms\.? )?(?-i:[A-ZÀ-Þ][\w'’-]+(?: [A-ZÀ-Þ][\w'’-]+){0,2}))"
_ROLE_SLOT = (
    re.compile(rf"(?i)^(?:now )?(?:sees|visits|goes to|is (?:now )?(?:seeing|treated by)|has) (?:an? (?:new )?"
               rf"|the (?:new )?|a new )?(?P<role>{_ROLE}),? {_NAME}\b"),
    re.compile(rf"(?i)^'s (?:new |current )?(?P<role>{_ROLE}) (?:is|ist|heißt) (?:now )?{_NAME}\b"),
    re.compile(rf"(?i)^(?:now )?(?:does|has|takes|gets|goes to) (?:[\w-]+ ){{0,2}}?(?P<domain>[\w-]*?)(?:therapy"
               rf"|lessons|classes|sessions|training|coaching|tutoring)\b[^,;]*? with (?:(?:a|the|her|his|their|new) )*"
               rf"(?P<role>{_ROLE}),? {_NAME}\b"),
)
"""A person in a role: "sees physiotherapist Ana Braga", "'s dentist is Dr. Okafor", "does knee physiotherapy …
with therapist Jonas Richter" (the activity names the role: physio-therapy and a therapist are a physiotherapist)."""
_ACTIVITY_VERBS = {"climbs": "climbing", "boulders": "climbing", "swims": "swimming", "runs": "running",
                   "trains": "training", "skates": "skating", "dances": "dancing", "rows": "rowing",
                   "cycles": "cycling", "works out": "gym", "goes bouldering": "climbing",
                   "goes climbing": "climbing", "goes swimming": "swimming", "goes running": "running",
                   "goes skating": "skating", "goes dancing": "dancing", "goes rowing": "rowing"}
_OFTEN = (r"(?:(?:once|twice|three times|\d+ times|[\w-]+ days?) a (?:week|month)|every (?:\w+ )?\w+|on \w+days"
          r"|most \w+|(?:at|in the) (?:mornings|evenings|weekends)|regularly|weekly|indoors|outdoors|together"
          r"|with (?:(?-i:[A-ZÀ-Þ])[\w-]+|(?:her|his|their) \w+)(?: and (?-i:[A-ZÀ-Þ])[\w-]+)?)")
_ACTIVITY_SLOT = re.compile(
    rf"(?i)^(?:now |still |currently |usually |mostly )?(?:(?P<verb>{'|'.join(_ACTIVITY_VERBS)})|(?:plays|does"
    rf"|practi[sc]es) (?P<sport>[\w-]+))(?: {_OFTEN})* at (?P<place>(?:the )?(?-i:[A-ZÀ-Þ][\w'’-]+"
    rf"(?: [A-ZÀ-Þ&][\w'’-]*){{0,4}}))")
"""Where the owner does an activity now: "climbs at Berta Block", "boulders twice a week at Lisboa Climbing Hub",
"plays tennis at the TC Grunewald" (present tense: "climbed at …" is one event; only frequency words between the
verb and the place, so "runs a bakery at …" is none; the place is a name)."""
_LANGUAGES = ("english|german|french|spanish|portuguese|italian|dutch|polish|russian|ukrainian|czech|greek|turkish"
              "|arabic|hebrew|japanese|korean|chinese|mandarin|cantonese|hindi|swedish|danish|norwegian|finnish"
              "|hungarian|romanian|catalan|estonian|latvian|lithuanian|croatian|serbian|vietnamese|thai|indonesian")
_LEVEL = r"(?P<level>[abc][12](?:\.[12])?|beginner|elementary|intermediate|upper-intermediate|advanced|fluent|native)"
_LANGUAGE_SLOT = (
    re.compile(rf"(?i)^'s (?P<lang>{_LANGUAGES}) (?:level )?is (?:now |still )?(?:at )?(?:an? )?(?:level )?{_LEVEL}\b"),
    re.compile(rf"(?i)\b(?:holds|has|reached|achieved|is at) (?:an? )?(?:certified |official )?(?:level )?{_LEVEL}"
               rf"(?: level)?(?: in)? (?P<lang>{_LANGUAGES})\b"),
    re.compile(rf"(?i)\bspeaks (?P<lang>{_LANGUAGES}) at (?:an? )?(?:level )?{_LEVEL}\b"),
)
"""A language's level: "'s German is at A2 level", "now holds certified B1 German", "speaks Spanish at C1" (CEFR
levels and the usual words; the value is the level)."""
_WORDS = re.compile(r"[a-z0-9-]+")
_ROLE_WORDS = frozenset(role.split()[-1] for role in _ROLES)
_LEVEL_WORDS = frozenset(f"{a}{n}" for a in "abc" for n in "12") | frozenset(
    "beginner elementary intermediate upper-intermediate advanced fluent native".split())
"""Cheap first looks, by the words of the sentence: a role's patterns need a role word, a language's a level (most
sentences have neither; one alternation over every role cost ~9 µs a sentence)."""
_ADDED = re.compile(r"\b(?:also|too|as well|sometimes|occasionally)\b")
"""A class slot said of one more value, not a new one ("also climbs at …"): no slot."""


def _class_slots(rest: str, who: str) -> list[Slot]:
    """The slots of a class (`_ROLE_SLOT`, `_ACTIVITY_SLOT`, `_LANGUAGE_SLOT`) that `rest` (the sentence after its
    subject) states, the role first; none when it adds a value (`_ADDED`). Each states a current value, never an
    ending ("for the left knee" is no "left")."""
    low = rest.lower()
    words, found = set(_WORDS.findall(low)), []
    for pattern in _ROLE_SLOT if not _ROLE_WORDS.isdisjoint(words) else ():
        if m := pattern.search(rest):
            role = _ROLES[m["role"].lower()]
            if role == "therapist" and (m.groupdict().get("domain") or "").lower() == "physio":
                role = "physiotherapist"  # physio-therapy with a therapist
            found.append(Slot(who, role, m["name"], False))
            break
    if m := _ACTIVITY_SLOT.match(rest):
        activity = _ACTIVITY_VERBS[m["verb"].lower()] if m["verb"] else m["sport"].lower()
        found.append(Slot(who, f"{activity} place", m["place"], False))
    for pattern in _LANGUAGE_SLOT if not _LEVEL_WORDS.isdisjoint(words) else ():
        if m := pattern.search(rest):
            level = m["level"].lower()
            found.append(Slot(who, f"{m['lang'].lower()} level", level.upper() if level[0] in "abc" and level[1:2]
                              .isdigit() else level, False))
            break
    return [] if found and _ADDED.search(low) else found


_ATTRIBUTE = re.compile(r"^'s (?P<np>(?:[\w-]+ ){0,5}?[\w-]+) (?:is|are|ist|sind|beträgt|heißt|lautet|has (?:climbed"
                        r"|risen|gone up|fallen|dropped) to|(?:rose|climbed|fell|dropped|went up|went down) to) ")
_QUALIFIER = re.compile(r"\s+(?:at|on|in|from|with|for|of|to|by|bei|von|aus|mit)\b.*")
_GENERIC_ADJECTIVES = re.compile(r"\b(?:new|current|old|former|latest|present|usual|neue[rsn]?|aktuelle[rsn]?)\s+")
_ENDED = re.compile(r"\b(?:quit|left|broke up|split up|divorced|separated|no longer|nicht mehr|kein\w* mehr"
                    r"|gekündigt|getrennt)\b")
_ENDS = re.compile(r"^(?:quit|left|sold|gave up|gave away|stopped using|cancelled|hat (?:\S+ ){1,4}?verkauft"
                   r"|verkaufte) (?P<old>.+)$")
"""A new sentence that ends what an older one holds: "Owner sold the 2014 Renault Clio …" ends "Owner drives a
grey 2014 Renault Clio." when the two values share a word."""
_UNIT_WORDS = frozenset("""euro dollar pound franc month year week day hour minute km kg cm mile time first last
    new old one two""".split())
"""Words too common to tie one value to another ("5,200 euros" and "68,000 euros a year" share "euro")."""
_CLAUSE_CUT = re.compile(r",|;| but | because | after | although | though | which | whose | who | and ")
_THOUSANDS = re.compile(r"(?<=\d)[,.](?=\d{3}\b)")
_HEDGED = re.compile(r"\b(?:never|not|\w+n't|would|could|might|may|used to|was|were|lived|worked|wanted|wants|if"
                     r"|maybe|perhaps|plans?|planning|hopes?|wishes?|considering|thinking of|nie|niemals|nicht|kein"
                     r"\w*|würde|könnte|möchte|will|wollte|plant|vielleicht|früher|wohnte|lebte|arbeitete|war|hatte"
                     r"|wäre)\b")
_HEDGE_EXCEPTIONS = re.compile(r"\b(?:no longer|nicht mehr|kein\w* (?:\w+ )?mehr|in may|may \d+)\b")
_FROM_TO = re.compile(r"\b(?:switched|moved|changed|went|wechselte|ist|hat)\b.*?\b(?:from|von) (?P<old>.+?)"
                      r" (?:to|zu|zur|zum|nach) (?P<new>.+)$|\breplaced (?P<replaced>.+?) with (?P<by>.+)$",
                      re.IGNORECASE)
_NUMBER = re.compile(r"\d")
_VALUE_END = re.compile(r",|;|\s(?:in|on|at|since|for|with|from|after|because|as of|as|when|of|by|to|whose|which"
                        r"|who|that|seit|im|am|mit|als|und|and|but|aber|weil|bei|von)\s")
_ARTICLE = re.compile(r"^(?:a|an|the|ein|eine|einen|einem|der|die|das|den|dem|zur|zum)\s+")
# --- events and times of their own (is_state) ---------------------------------------------------------------------
_WEEKDAY = ("monday|tuesday|wednesday|thursday|friday|saturday|sunday|montag|dienstag|mittwoch|donnerstag|freitag"
            "|samstag|sonntag")
_MONTH = ("january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr"
          "|jun|jul|aug|sep|sept|oct|nov|dec|januar|februar|märz|mai|juni|juli|oktober|dezember")
_DATED = re.compile(
    rf"\b(?:{_WEEKDAY})\b(?!s)|\b(?:on|am|this|last|next) (?:{_WEEKDAY})\b(?!s)|\b\d{{1,2}}(?:st|nd|rd|th|\.)? (?:of )?"
    rf"(?:{_MONTH})\b|\b(?:{_MONTH}) \d{{1,2}}\b|\b(?:in|im|since|seit|of) (?:{_MONTH})\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b"
    r"|\b\d{1,2}[./]\d{1,2}[./]\d{2,4}\b|\b\d{1,2}\.\d{1,2}\.(?!\d)|\b(?:19|20)\d{2}\b|\b\d{1,2}:\d{2}\b"
    r"|\b\d{1,2} ?(?:am|pm|uhr)\b|\b(?:today|yesterday|tomorrow|tonight|heute|gestern|vorgestern|übermorgen)\b"
    r"|\blast (?:night|week|month|year|weekend)|\bthis (?:morning|afternoon|evening|week|weekend|month)"
    r"|\b(?:letzte|letzten|letztes|diese|dieses|diesen|nächste|nächsten) (?:woche|monat|jahr|wochenende)"
    r"|\b(?:heute|gestern) (?:morgen|abend|früh)|\bago\b|\bvor \d+ (?:tagen|wochen|monaten|jahren)")
_EVENT_VERB = re.compile(
    r"^(?:(?:also|just|then|finally|again) )?(?:was|were|had|did|went|got|made|saw|took|came|found|gave|felt|left"
    r"|bought|ate|drank|ran|met|began|wrote|spent|sent|lost|won|sat|stood|heard|held|slept|woke|swam|flew|drove"
    r"|rode|broke|chose|spoke|forgot|brought|caught|taught|sold|built|paid|said|fell|grew|threw|wore|read|put|cut"
    r"|hit|set|let|won|\w{2,}(?<!e)ed|\w+ied)\b")
_GERMAN_PERFECT = re.compile(r"^(?:hat|ist|haben|sind)\b.*\b(?:ge\w+(?:t|en)|(?:be|er|ver|zer|ent|über)\w+(?:t|en))$")
_GERMAN_PAST = re.compile(r"^(?:\w+te|lief|ging|kam|fuhr|aß|trank|schrieb|las|sah|gab|nahm|flog|schwamm|traf)\b")


class Slot(NamedTuple):
    """What one sentence says of one slot: `subject` ("owner", "sister mira"), `attribute` ("home city", or a
    noun phrase: "glasses prescription"), the `value` as written ("Berlin"), and whether it says the slot
    `ended` ("quit Fernway", "broke up", "no longer vegetarian")."""

    subject: str
    attribute: str
    value: str
    ended: bool


def _fold(text: str) -> str:
    return text.strip().rstrip(".!?… ").replace("’", "'")


def read_slots(sentence: str, classes: bool = True) -> list[Slot]:
    """`_read_slots`, kept per sentence (`capture_rules.PARSED_CACHE`: capture reads the same older memories capture
    after capture), of the sentence and of each later clause of Owner's after a semicolon (`_later_clauses`:
    "Owner changed dentists; their dentist is now Dr. Ferreira." states the dentist, which went unseen and ranked
    the old one first: a breaker run)."""
    slots = list(_read_slots(sentence, classes))
    for clause in _later_clauses(sentence):
        slots += [slot for slot in _read_slots(clause, classes) if slot not in slots]
    return slots


_CLAUSE_OWNER = re.compile(r"^(?:their|owner's) (?=\w)", re.IGNORECASE)
"""A later clause about Owner: "their …" (how the extractor writes the owner's "my" after the first mention) or
"Owner's …"; "his"/"her" name someone else ("Owner met Ana; her dentist is …")."""


def _later_clauses(sentence: str) -> list[str]:
    """The clauses after the first of a sentence about Owner joined by "; ", each as a sentence of its own ("their
    gym is now Fitness Hut." -> "Owner's gym is now Fitness Hut."); a clause about someone else is left out."""
    if "; " not in sentence or not sentence.lower().startswith("owner"):
        return []
    out = []
    for clause in sentence.split("; ")[1:]:
        if _CLAUSE_OWNER.match(clause):
            out.append("Owner's " + clause[_CLAUSE_OWNER.match(clause).end():])
        elif clause.lower().startswith("owner"):
            out.append("Owner" + clause[5:])
    return out


@lru_cache(maxsize=PARSED_CACHE)
def _read_slots(sentence: str, classes: bool) -> tuple[Slot, ...]:
    """The slots `sentence` states, most specific first ("Owner works as a nurse at the Charité." states a job
    and an employer); [] when it is not about Owner or Owner's kin by the surface ("Owner …", "Owner's sister Ana
    …", "Owners Freundin …") or names no attribute by `_SLOTS`, the class slots (when `classes`: `_class_slots`)
    or "Owner's <noun phrase> is …". A value runs from the slot's words to the first qualifier ("in May", ",
    which …", "since 2025"). A sentence in the owner's first person (a memory stored as given: "My PIN is 4444.")
    is read as its third-person form (`twin.text.third_person`), so it shares the slot of "Owner's PIN is 7777.".
    Read-only; never raises."""
    text = _THOUSANDS.sub("", _fold(sentence))
    subject = _SUBJECT.match(text)
    if subject is None:
        owned = _THOUSANDS.sub("", _fold(third_person(sentence)))
        subject = _SUBJECT.match(owned)
        if subject is None:
            return ()
        text = owned
    rest = text[subject.end():].lstrip()
    if subject["kin"] and not subject["name"] and _COPULA_NEXT.match(rest.lower()):
        subject, rest = None, "'s " + text[len("owner") + 2:].lstrip()
    elif subject["kin"] is None and rest[:2].lower() in ("'s", "s "):  # "Owner's rent is …", "Owners Miete …"
        subject, rest = None, "'s " + rest[2:].lstrip()
    who = "owner" if subject is None or not subject["kin"] else " ".join(
        filter(None, (subject["kin"].lower(), subject["name"])))
    low, ended, found = rest.lower(), bool(_ENDED.search(rest.lower())), []
    for attribute, pattern in _SLOTS:
        value = rest[m.end():].split(",")[0].strip() if attribute == "address" and (m := pattern.search(low)) else (
            _value(rest[m.end():]) if (m := pattern.search(low)) else "")
        if value:
            if attribute == "employer" and low.startswith(("quit", "left")) and not value[0].isupper():
                continue  # "quit smoking", "left the party early": no employer named
            found.append(Slot(who, attribute, value, ended))
    if not found and classes:
        found = _class_slots(rest, who)
    if not found and (m := _ATTRIBUTE.match(low)):
        noun_phrase = _QUALIFIER.sub("", _GENERIC_ADJECTIVES.sub("", m["np"])).strip()
        if value := _value(rest[m.end():]):
            found.append(Slot(who, noun_phrase, value, ended))
    return tuple(found)


def read_slot(sentence: str) -> Slot | None:
    """The first of `read_slots(sentence)`, or None."""
    slots = read_slots(sentence)
    return slots[0] if slots else None


def slot_of(sentence: str) -> tuple[str, str] | None:
    """`(subject, attribute)` of `sentence` (`read_slot`), the key a later slot-keyed supersession can store with
    the memory: `("owner", "home city")` for "Owner moved to Berlin in May." and "Owner wohnt in Lissabon.",
    `("owner", "dentist")` for "Owner sees dentist Dr. Okafor." (class slots included: recall ranks by them);
    None when the sentence names no attribute ("Owner moved the dentist appointment to Friday.")."""
    slot = read_slot(sentence)
    return None if slot is None else (slot.subject, slot.attribute)


def _value(text: str) -> str:
    """The value at the start of `text`: cut at the first qualifier, an article dropped."""
    value = _VALUE_END.split(" " + text.strip() + " ", maxsplit=1)[0].strip()
    value = re.sub(r"\s+(?:um)?gezogen$", "", value)
    value = re.sub(r"^(?:now|currently|still|nun|jetzt) (?=\S)", "", value)  # "is now Fitness Hut": the value
    return _ARTICLE.sub("", value, count=1) if len(value.split()) > 1 else value


NAMED_ATTRIBUTES = frozenset(attribute for attribute, _ in _SLOTS) | frozenset(_ROLES.values()) | frozenset(
    f"{activity} place" for activity in _ACTIVITY_VERBS.values()) | frozenset(
    f"{language} level" for language in _LANGUAGES.split("|"))
"""The attributes of `_SLOTS` ("home city", "bank", …) and of the class slots with words of ours ("dentist",
"climbing place", "german level"): safe in a diary line; any other attribute is a noun phrase of the memory itself
("bike lock code", "tennis place")."""


def _same_attribute(a: Slot, b: Slot) -> bool:
    """One subject, and one attribute: the same, or one ending the other ("lichess rapid rating" / "rapid
    rating"), except for credentials (a key `twin.text.secret_fields.names_secret` reads as a secret, or a
    "code"), where only the same attribute counts: a "phone SIM PIN" is not the "PIN", a "bank mot de passe" not
    the "mot de passe"."""
    if a.subject != b.subject:
        return False
    short, long = sorted((a.attribute, b.attribute), key=len)
    return short == long or (long.endswith(" " + short) and not {short, long} & NAMED_ATTRIBUTES
                             and not _credential(short))


def _credential(attribute: str) -> bool:
    """True when `attribute` names a credential: a secret by the labels of `secret_fields.names_secret` (ten
    languages), or a code of any kind."""
    return names_secret(attribute) is not None or attribute.rsplit(" ", 1)[-1] == "code"


def slot_change(new: str, old: str) -> str | None:
    """Why `new` replaces `old`, in words a person reads ("same home city, new value: Berlin replaces Lisbon"), or None;
    never for a class slot (module docstring). Both must be plain statements (no negation but "no longer", no modal,
    plan or past state: `_HEDGED`) of the same slot (`read_slots`; or `new` moves or ends the value of `old`'s slot:
    "switched from Neovim to Helix", "replaced the Pixel 7 with a Pixel 9 Pro", "sold the Renault Clio"), and the
    values must differ: neither value's words (`tokens`) holding the other's ("Berlin" / "Berlin-Neukölln" are one
    value), or one of the two saying the slot ended (with the value it ends, if named)."""
    if _hedged(new) or _hedged(old):
        return None
    olds = read_slots(old, classes=False)
    for b in olds:
        if (why := _moved_or_ended(new, b)) is not None:
            return why
    for a in read_slots(new, classes=False):
        for b in olds:
            if _same_attribute(a, b) and (why := _changed(a, b)):
                return why
    return None


def _moved_or_ended(new: str, b: Slot) -> str | None:
    """`new` moves the value of slot `b` elsewhere ("from X to Y", "replaced X with Y") or ends it ("sold X"),
    X sharing a word with `b`'s value."""
    text = _THOUSANDS.sub("", _fold(new))
    subject = _SUBJECT.match(text)
    if subject is None or (subject["kin"] and b.subject == "owner"):
        return None
    old_words = tokens(b.value) - _UNIT_WORDS
    moved = _FROM_TO.search(text)
    if moved and old_words & tokens(moved["old"] or moved["replaced"]) and (target := _value(moved["new"]
                                                                                            or moved["by"])):
        return f"same {b.attribute}, new value: {_cut(target)} replaces {_cut(b.value)}"
    if (end := _ENDS.match(text[subject.end():].lstrip().lower())) and old_words & tokens(end["old"]):
        return f"same {b.attribute}, no longer {_cut(b.value)}"
    return None


def _changed(a: Slot, b: Slot) -> str | None:
    """Why value `a` replaces value `b` of one slot, or None when they are one value."""
    ta, tb = tokens(a.value), tokens(b.value)
    if a.ended and not b.ended:
        return f"same {a.attribute}, no longer {_cut(b.value)}" if ta & tb or not ta else None
    if b.ended and not a.ended:
        return f"same {a.attribute}, new value: {_cut(a.value)} (it had ended)"
    if _NUMBER.search(b.value) and not _NUMBER.search(a.value):  # "rent is high": a judgement, not a new value
        return None
    if not ta or not tb or ta <= tb or tb <= ta:
        return None
    return f"same {a.attribute}, new value: {_cut(a.value)} replaces {_cut(b.value)}"


@lru_cache(maxsize=PARSED_CACHE)
def _hedged(sentence: str) -> bool:
    """A hedge word (`_HEDGED`) in the main clause: up to the first comma, "but", "because", "which", "and" …
    ("Owner and Sofia broke up in August and decided not to …" is read to "… in August")."""
    low = _fold(sentence).lower()
    lead = len(" ".join(low.split()[:3]))  # "owner and sofia": that "and" joins the subject
    cut = next((m.start() for m in _CLAUSE_CUT.finditer(low) if m.start() >= lead), len(low))
    return bool(_HEDGED.search(_HEDGE_EXCEPTIONS.sub(" ", low[:cut])))


def is_state(sentence: str) -> bool:
    """Whether `sentence` states how things are rather than what happened once: its verb after the subject is
    not in the past tense ("Owner ran …", "Owner paid …", "Owner read …", German "Owner ist … gelaufen", "Owner
    lief …"; "has run" and "is born" are states), and it has no time of its own (a weekday but not "on
    Tuesdays", a date, a month, a year, a clock time, "today", "last night", "heute", "letzte Woche"). Ours: a
    number change supersedes only between two states (a count, an age, a rent, a weight, a version in use)."""
    text = _fold(sentence)
    low = text.lower()
    if _DATED.search(low):
        return False
    subject = _SUBJECT.match(text)
    verb = low[subject.end():].lstrip() if subject else low
    if verb.startswith(("'s ", "s ")):  # "Owner's rent is …": the verb comes after the noun phrase
        return True
    return not (_EVENT_VERB.match(verb) or _GERMAN_PERFECT.match(verb) or _GERMAN_PAST.match(verb))


def _cut(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"
