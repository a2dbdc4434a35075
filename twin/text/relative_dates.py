"""Relative dates in a memory -> the dates they meant, on the text's own time (seed 000: a memory stands alone).

"Owner went to Rome last week." read a month later no longer says when; so at learning time, with the time the
text was written (`learn()`'s now, a file's modification time), "yesterday" becomes "on 30 November 2026" and
"last week" "in the week of 23 November 2026" (weeks run Monday to Sunday, ISO 8601; the phrase is the one
`twin.recall.time_window` reads back in a query). English, German and French: days (yesterday, today, tomorrow, the day
before/after), parts of a day (this morning, last night), last/this/next week, weekend, month, year and weekday,
and "N days/weeks/months/years ago". A date is the local date of `now` (an aware datetime in the owner's zone).
Vague words (recently, lately, soon) are left alone: they name no date. Rules ours; tests/test_relative_dates.py.
Pure, linear in the sentence.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

__all__ = ["has_relative_date", "resolve_dates"]

_MONTHS = {
    "en": "January February March April May June July August September October November December".split(),
    "de": "Januar Februar März April Mai Juni Juli August September Oktober November Dezember".split(),
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre".split(),
}
_WEEKDAYS = {
    "en": "monday tuesday wednesday thursday friday saturday sunday".split(),
    "de": "montag dienstag mittwoch donnerstag freitag samstag sonntag".split(),
    "fr": "lundi mardi mercredi jeudi vendredi samedi dimanche".split(),
}
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "a couple of": 2, "einem": 1, "einer": 1, "zwei": 2,
           "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "un": 1,
           "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "sept": 7, "huit": 8, "neuf": 9, "dix": 10}
_COUNT = r"(?P<n>\d{1,3}|a couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten|einem|einer|zwei|drei" \
         r"|vier|fünf|sechs|sieben|acht|neun|zehn|une?|deux|trois|quatre|cinq|sept|huit|neuf|dix)"
_UNITS = {"day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
          "year": "year", "years": "year", "tag": "day", "tagen": "day", "woche": "week", "wochen": "week",
          "monat": "month", "monaten": "month", "jahr": "year", "jahren": "year", "jour": "day", "jours": "day",
          "semaine": "week", "semaines": "week", "mois": "month", "an": "year", "ans": "year", "année": "year",
          "années": "year"}
_PARTS = {"morning": "morning", "afternoon": "afternoon", "evening": "evening", "night": "night",
          "morgen": "morning", "vormittag": "morning", "nachmittag": "afternoon", "abend": "evening",
          "nacht": "night", "matin": "morning", "après-midi": "afternoon", "soir": "evening", "nuit": "night"}
_PART_WORDS = {"de": {"morning": "Morgen", "afternoon": "Nachmittag", "evening": "Abend", "night": "Nacht"},
               "fr": {"morning": "matin", "afternoon": "après-midi", "evening": "soir", "night": "nuit"}}
_EN_WD = "|".join(_WEEKDAYS["en"])
_DE_WD = "|".join(_WEEKDAYS["de"])
_FR_WD = "|".join(_WEEKDAYS["fr"])
_PATTERNS: dict[str, re.Pattern[str]] = {lang: re.compile(rx, re.IGNORECASE) for lang, rx in {
    "en": r"\b(?:(?P<prep>since|until|till|from|by|before|after|around|on|in)\s+)?(?:"
          r"(?P<dby>the day before yesterday)|(?P<dat>the day after tomorrow)"
          r"|(?P<dayword>yesterday|today|tomorrow|tonight)(?:\s+(?P<dpart>morning|afternoon|evening|night))?"
          r"|this\s+(?P<thispart>morning|afternoon|evening)|last\s+(?P<lastnight>night)"
          rf"|(?P<rel>last|this|next|past)\s+(?P<unit>week|weekend|month|year|{_EN_WD})"
          rf"|{_COUNT}\s+(?P<agounit>days?|weeks?|months?|years?)\s+ago)\b",
    "de": r"(?<![\wäöüß])(?:(?P<prep>seit|bis|ab|vor|nach)\s+)?(?:"
          r"(?P<dby>vorgestern)|(?P<dat>übermorgen)"
          r"|(?P<dayword>gestern|heute|(?:(?-i:morgen)|^(?-i:Morgen))(?!\s+(?:früh\s+)?(?:um|gegen)\b)"
          r"(?=\s+[a-zäöü]|\s*[,.!?]|$))"
          r"(?:\s+(?P<dpart>Morgen|Vormittag|Nachmittag|Abend|Nacht))?"
          r"|(?P<rel>letzte[nmsr]?|vergangene[nmsr]?|diese[nmsr]?|nächste[nmsr]?|kommende[nmsr]?)\s+"
          rf"(?P<unit>Woche|Wochenende|Monat|Jahr|{_DE_WD})"
          rf"|vor\s+{_COUNT}\s+(?P<agounit>Tagen|Tag|Wochen|Woche|Monaten|Monat|Jahren|Jahr))(?![\wäöüß])",
    "fr": r"(?<![\wàâéèêîôûç'’-])(?:(?P<prep>depuis|jusqu['’]à|dès|avant|après)\s+)?(?:"
          r"(?P<dby>avant-hier)|(?P<dat>après-demain)"
          r"|(?P<dayword>hier|aujourd['’]hui|demain)(?:\s+(?P<dpart>matin|après-midi|soir))?"
          r"|(?:ce|cet|cette)\s+(?P<thispart>matin|après-midi|soir)"
          r"|(?:(?:la|le|l['’])\s*)?(?P<unit>semaine|week-end|mois|année|an)\s+(?P<rel>dernière|dernier|passée|passé"
          r"|prochaine|prochain)|(?P<this>cette semaine|ce week-end|ce mois-ci|cette année)"
          rf"|(?P<wd>{_FR_WD})\s+(?P<wdrel>dernier|prochain)"
          rf"|il y a\s+{_COUNT}\s+(?P<agounit>jours?|semaines?|mois|ans?|années?))(?![\wàâéèêîôûç-])",
}.items()}


_TRIGGERS = {
    "en": re.compile(r"(?i)\b(?:yesterday|today|tomorrow|tonight|last|this|next|past|ago)\b"),
    "de": re.compile(r"(?i)gestern|heute|morgen|letzt|vergangen|dies|nächst|kommend|vor\s"),
    "fr": re.compile(r"(?i)hier|aujourd|demain|derni|pass|prochain|il y a|ce matin|cet après|ce soir|cette|ce week"
                     r"|ce mois"),
}
"""Words one of `_PATTERNS` needs: a sentence without them is not searched (keeps the cost low)."""


def has_relative_date(sentence: str) -> bool:
    """True when `sentence` holds a relative date this module resolves, in English, German or French."""
    return any(_TRIGGERS[lang].search(sentence) and pattern.search(sentence) for lang, pattern in _PATTERNS.items())


def resolve_dates(sentence: str, language: str | None, now: datetime | None) -> str:
    """`sentence` with each relative date written as the date it meant on `now`'s calendar (`now` aware, in the
    owner's zone; its date is "today"), in `language` ("en", "de", "fr"; None: English words only, then German,
    then French). `now` None leaves the sentence as it is."""
    if now is None:
        return sentence
    today = now.date()
    for lang in ([language] if language in _PATTERNS else ["en", "de", "fr"]):
        if _TRIGGERS[lang].search(sentence) is None:
            continue
        sentence = _PATTERNS[lang].sub(lambda m, lang=lang: _replace(m, lang, today), sentence)
    return sentence


def _replace(m: re.Match[str], lang: str, today: date) -> str:
    """The absolute phrase for one match, the preposition kept where it still reads ("since the week of …")."""
    phrase = _phrase(m, lang, today)
    if phrase is None:
        return m.group()
    prep = m["prep"]
    if prep:
        phrase = _with_preposition(prep, phrase, lang)
    return phrase[:1].upper() + phrase[1:] if m.group()[:1].isupper() else phrase


def _with_preposition(prep: str, phrase: str, lang: str) -> str:
    """"since" + "on 30 November" -> "since 30 November"; "in"/"on" before a phrase that has its own -> dropped."""
    low = prep.lower()
    if lang == "en":
        bare = re.sub(r"^(?:on|in)\s+", "", phrase)
        return bare if low in ("on", "in") and bare != phrase else f"{prep} {bare}" if low not in ("on", "in") \
            else f"{prep} {phrase}"
    if lang == "de":
        bare = re.sub(r"^(?:am|im|in der)\s+", "", phrase)
        return f"{prep} {'dem ' + bare if bare != phrase and phrase.startswith('am') else bare}"
    return f"{prep} {phrase}"


def _phrase(m: re.Match[str], lang: str, today: date) -> str | None:
    """The date phrase for a match (see `_day`, `_week`, …), or None to leave it as written."""
    if m["dby"]:
        return _day(today - timedelta(days=2), lang)
    if m["dat"]:
        return _day(today + timedelta(days=2), lang)
    if m["dayword"]:
        word = m["dayword"].lower().replace("’", "'")
        shift = {"yesterday": -1, "gestern": -1, "hier": -1, "tomorrow": 1, "morgen": 1, "demain": 1}.get(word, 0)
        part = _PARTS.get((m["dpart"] or "").lower()) or ("night" if word == "tonight" else None)
        return _part(today + timedelta(days=shift), part, lang) if part else _day(today + timedelta(shift), lang)
    if m.groupdict().get("thispart"):
        return _part(today, _PARTS[m["thispart"].lower()], lang)
    if m.groupdict().get("lastnight"):
        return _part(today - timedelta(days=1), "night", lang)
    if m.groupdict().get("this"):
        unit = {"cette semaine": "week", "ce week-end": "weekend", "ce mois-ci": "month", "cette année": "year"}
        return _unit(unit[m["this"].lower()], 0, today, lang)
    if m.groupdict().get("wd"):
        return _weekday(_WEEKDAYS["fr"].index(m["wd"].lower()), m["wdrel"].lower().startswith("d"), today, lang)
    if m["agounit"]:
        n = _COUNTS.get(m["n"].lower()) if not m["n"].isdigit() else int(m["n"])
        unit = _UNITS[m["agounit"].lower()]
        if n is None or n == 0:
            return None
        if unit == "day":
            return _day(today - timedelta(days=n), lang)
        return _unit(unit, -n, today, lang)
    return _relative_unit(m, lang, today)


def _relative_unit(m: re.Match[str], lang: str, today: date) -> str | None:
    """last/this/next + week, weekend, month, year or weekday (and the German and French forms)."""
    rel, unit = m["rel"].lower(), m["unit"].lower()
    shift = -1 if rel.startswith(("last", "past", "letzt", "vergangen", "derni", "pass")) else \
        1 if rel.startswith(("next", "nächst", "kommend", "prochain")) else 0
    for names in _WEEKDAYS.values():
        if unit in names:
            if shift == 0:
                return _day(today + timedelta(days=names.index(unit) - today.weekday()), lang)
            return _weekday(names.index(unit), shift < 0, today, lang)
    unit = {"wochenende": "weekend", "week-end": "weekend", "woche": "week", "semaine": "week", "monat": "month",
            "mois": "month", "jahr": "year", "année": "year", "an": "year"}.get(unit, unit)
    return _unit(unit, shift, today, lang)


def _weekday(index: int, past: bool, today: date, lang: str) -> str:
    """The most recent such weekday before today (`past`), else the first after today."""
    if past:
        back = (today.weekday() - index) % 7 or 7
        return _day(today - timedelta(days=back), lang)
    ahead = (index - today.weekday()) % 7 or 7
    return _day(today + timedelta(days=ahead), lang)


def _unit(unit: str, shift: int, today: date, lang: str) -> str:
    """The week/weekend/month/year `shift` units from today's, as a phrase."""
    if unit in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday()) + timedelta(weeks=shift)
        if unit == "weekend":
            saturday = monday + timedelta(days=5)
            return {"en": f"on the weekend of {_date(saturday, lang)}",
                    "de": f"am Wochenende vom {_date(saturday, lang)}",
                    "fr": f"le week-end du {_date(saturday, lang)}"}[lang]
        return {"en": f"in the week of {_date(monday, lang)}", "de": f"in der Woche vom {_date(monday, lang)}",
                "fr": f"la semaine du {_date(monday, lang)}"}[lang]
    if unit == "month":
        index = today.year * 12 + today.month - 1 + shift
        month = f"{_MONTHS[lang][index % 12]} {index // 12}"
        return {"en": f"in {month}", "de": f"im {month}", "fr": f"en {month}"}[lang]
    year = today.year + shift
    return {"en": f"in {year}", "de": f"im Jahr {year}", "fr": f"en {year}"}[lang]


def _part(day: date, part: str, lang: str) -> str:
    """"on the evening of 30 November 2026" / "am Abend des 30. November 2026" / "le soir du 30 novembre 2026"."""
    if lang == "de":
        return f"am {_PART_WORDS['de'][part]} des {_date(day, lang)}"
    if lang == "fr":
        return f"le {_PART_WORDS['fr'][part]} du {_date(day, lang)}"
    return f"on the {part} of {_date(day, lang)}"


def _day(day: date, lang: str) -> str:
    return {"en": "on ", "de": "am ", "fr": "le "}[lang] + _date(day, lang)


def _date(day: date, lang: str) -> str:
    """"30 November 2026" / "30. November 2026" / "30 novembre 2026" ("1er" on the first, in French)."""
    month = _MONTHS[lang][day.month - 1]
    if lang == "de":
        return f"{day.day}. {month} {day.year}"
    if lang == "fr":
        return f"{'1er' if day.day == 1 else day.day} {month} {day.year}"
    return f"{day.day} {month} {day.year}"
