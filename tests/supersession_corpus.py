"""Pairs of memories for measuring supersession (capture's "the new memory replaces the old one"), English and
German: `(old, new, kind of both, should the new one supersede the old?)`. `PAIRS` (87) is what the rules were
measured and tuned on; `HELD_OUT` (28) was written afterwards and never tuned on.

Written for this corpus, not taken from the eval set. "Should" pairs are updates of one state: the same subject
and attribute with a new value (home city, employer, job, manager, partner, diet, phone, car, bank, editor,
rent, salary, age, weight, a count, a version in use). "Must not" pairs are the traps seen in model-written
bursts: separate events that differ in a number or a date, a shared relation verb about different attributes
("moved", "switched", "changed"), other people, past or hedged statements, values that add up. Read by
tests/test_supersession.py and bench/supersession.py.
"""

from __future__ import annotations

from typing import NamedTuple


class Pair(NamedTuple):
    """One case: `old` is stored first, then `new`; `kind` is both candidates' kind; `supersedes` the truth."""

    old: str
    new: str
    kind: str
    supersedes: bool


S, N = True, False
PAIRS: tuple[Pair, ...] = tuple(Pair(*row) for row in (
    # --- English: updates of one state ------------------------------------------------------------------------
    ("Owner lives in Lisbon.", "Owner lives in Berlin.", "fact", S),
    ("Owner lives in Lisbon.", "Owner moved to Berlin in May.", "fact", S),
    ("Owner lives in Porto.", "Owner relocated from Porto to Madrid.", "fact", S),
    ("Owner works at Fernway.", "Owner works at Kestrel Labs.", "fact", S),
    ("Owner works at Fernway.", "Owner quit Fernway.", "fact", S),
    ("Owner's manager is Anke Vogt.", "Owner's manager is Daniel Osei.", "relationship", S),
    ("Owner is dating Sofia.", "Owner and Sofia broke up.", "relationship", S),
    ("Owner is vegetarian.", "Owner is vegan.", "fact", S),
    ("Owner is vegetarian.", "Owner is no longer vegetarian.", "fact", S),
    ("Owner uses a Google Pixel 7.", "Owner uses an iPhone 16.", "fact", S),
    ("Owner drives a Renault Clio.", "Owner drives a Volvo V60.", "fact", S),
    ("Owner writes code in Neovim.", "Owner switched from Neovim to Helix.", "preference", S),
    ("Owner's rent is 900 euros a month.", "Owner's rent is 950 euros a month.", "fact", S),
    ("Owner's salary is 92,000 euros a year.", "Owner's salary is 99,000 euros a year.", "fact", S),
    ("Owner is 34 years old.", "Owner is 35 years old.", "fact", S),
    ("Owner weighs 80 kg.", "Owner weighs 77 kg.", "fact", S),
    ("Owner has 2 cats.", "Owner has 3 cats.", "fact", S),
    ("Owner has one dog.", "Owner has two dogs.", "fact", S),
    ("Owner uses Python 3.11.", "Owner uses Python 3.12.", "fact", S),
    ("Owner's daughter is 7 years old.", "Owner's daughter is 8 years old.", "relationship", S),
    ("Owner banks with Sparkasse.", "Owner banks with DKB.", "fact", S),
    ("Owner's bank is Sparkasse.", "Owner moved their accounts from Sparkasse to DKB.", "fact", S),
    ("Owner's phone number is 0151 2345 678.", "Owner's phone number is 0170 9988 776.", "fact", S),
    ("Owner loves olives.", "Owner hates olives.", "preference", S),
    ("Owner prefers espresso over dark roast.", "Owner prefers dark roast over espresso.", "preference", S),
    ("Owner has run 3 marathons.", "Owner has run 4 marathons.", "fact", S),
    ("Owner's sister Mira lives in Porto.", "Owner's sister Mira lives in Copenhagen.", "relationship", S),
    ("Owner's partner is Lena.", "Owner's partner is Jonas.", "relationship", S),
    # --- English: must not supersede ---------------------------------------------------------------------------
    ("Owner ran 5 km on Monday.", "Owner ran 8 km on Wednesday.", "fact", N),
    ("Owner ran 5 km.", "Owner ran 8 km.", "fact", N),
    ("Owner paid 40 euros for the dentist.", "Owner paid 60 euros for the plumber.", "fact", N),
    ("Owner paid 40 euros for the dentist.", "Owner paid 60 euros for the dentist.", "fact", N),
    ("Owner spent 30 euros on groceries.", "Owner spent 45 euros on groceries.", "fact", N),
    ("Owner drank 2 coffees today.", "Owner drank 3 coffees today.", "fact", N),
    ("Owner read 20 pages of Dune.", "Owner read 35 pages of Dune.", "fact", N),
    ("Owner ordered 2 pizzas on Friday.", "Owner ordered 3 pizzas on Friday.", "fact", N),
    ("Owner has a meeting at 10:00 on Monday.", "Owner has a meeting at 14:00 on Monday.", "fact", N),
    ("Owner has 2 meetings on 3 May.", "Owner has 4 meetings on 3 May.", "fact", N),
    ("Owner's flight to Rome leaves at 7:30.", "Owner's flight to Oslo leaves at 9:15.", "fact", N),
    ("Owner slept 6 hours last night.", "Owner slept 8 hours last night.", "fact", N),
    ("Owner's rent in 2024 was 900 euros.", "Owner's rent in 2025 is 950 euros.", "fact", N),
    ("Owner lives in Berlin.", "Owner moved their accounts from one bank to another.", "fact", N),
    ("Owner lives in Berlin.", "Owner moved their savings from ING to DKB.", "fact", N),
    ("Owner lives in Lisbon.", "Owner moved the dentist appointment to Friday.", "fact", N),
    ("Owner lives in Lisbon.", "Owner moved to a new team at work.", "fact", N),
    ("Owner works at Fernway.", "Owner switched to a cheaper electricity tariff.", "fact", N),
    ("Owner works at Fernway.", "Owner changed the password of the router.", "fact", N),
    ("Owner lives in Berlin.", "Owner changed banks last year.", "fact", N),
    ("Owner uses a Google Pixel 7.", "Owner's phone number ends in 412.", "fact", N),
    ("Owner lives in Lisbon.", "Owner's parents live in Faro.", "fact", N),
    ("Owner lives in Lisbon.", "Owner lived in Paris in 2010.", "fact", N),
    ("Owner lives in Lisbon.", "Owner would never live in Berlin.", "fact", N),
    ("Owner lives at Weserstraße 112.", "Owner lives in Berlin.", "fact", N),
    ("Owner has 2 cats.", "Owner has 2 sisters.", "fact", N),
    ("Owner likes jazz.", "Owner likes techno.", "preference", N),
    ("Owner has visited Japan.", "Owner has visited Portugal.", "fact", N),
    ("Owner's sister Ana lives in Porto.", "Owner's brother Rui lives in Lisbon.", "relationship", N),
    ("Owner's rent is 900 euros.", "Owner's rent is high.", "fact", N),
    ("Owner bought 3 books on 2 May.", "Owner bought 5 books on 9 May.", "fact", N),
    ("Owner scored 80 points in the quiz.", "Owner scored 95 points in the quiz.", "fact", N),
    ("Owner walked 10000 steps yesterday.", "Owner walked 12000 steps yesterday.", "fact", N),
    # --- German: updates of one state ---------------------------------------------------------------------------
    ("Owner wohnt in Lissabon.", "Owner wohnt jetzt in Berlin.", "fact", S),
    ("Owner wohnt in Hamburg.", "Owner ist nach München umgezogen.", "fact", S),
    ("Owner arbeitet bei Siemens.", "Owner arbeitet jetzt bei Bosch.", "fact", S),
    ("Owner arbeitet als Lehrerin.", "Owner arbeitet als Schulleiterin.", "fact", S),
    ("Owner ist Vegetarier.", "Owner ist Veganer.", "fact", S),
    ("Owner hat 2 Katzen.", "Owner hat 3 Katzen.", "fact", S),
    ("Owner ist 34 Jahre alt.", "Owner ist 35 Jahre alt.", "fact", S),
    ("Owner wiegt 80 kg.", "Owner wiegt 78 kg.", "fact", S),
    ("Owners Miete beträgt 900 Euro.", "Owners Miete beträgt 950 Euro.", "fact", S),
    ("Owner fährt einen VW Golf.", "Owner fährt einen Skoda Octavia.", "fact", S),
    ("Owners Bank ist die Sparkasse.", "Owners Bank ist die DKB.", "fact", S),
    ("Owners Freundin heißt Lena.", "Owners Freundin heißt Mara.", "relationship", S),
    # --- German: must not supersede -----------------------------------------------------------------------------
    ("Owner ist am Montag 5 km gelaufen.", "Owner ist am Mittwoch 8 km gelaufen.", "fact", N),
    ("Owner ist 5 km gelaufen.", "Owner ist 8 km gelaufen.", "fact", N),
    ("Owner hat 40 Euro für den Zahnarzt bezahlt.", "Owner hat 60 Euro für den Klempner bezahlt.", "fact", N),
    ("Owner hat 40 Euro für den Zahnarzt bezahlt.", "Owner hat 60 Euro für den Zahnarzt bezahlt.", "fact", N),
    ("Owner hat heute 2 Kaffee getrunken.", "Owner hat heute 3 Kaffee getrunken.", "fact", N),
    ("Owner hat am 3. Mai 2 Termine.", "Owner hat am 3. Mai 4 Termine.", "fact", N),
    ("Owner wohnt in Berlin.", "Owner hat seine Konten von der Sparkasse zur DKB umgezogen.", "fact", N),
    ("Owner wohnt in Berlin.", "Owner hat den Zahnarzttermin auf Freitag verschoben.", "fact", N),
    ("Owner wohnt in Lissabon.", "Owners Eltern wohnen in Faro.", "fact", N),
    ("Owner wohnt in Lissabon.", "Owner wohnte 2010 in Paris.", "fact", N),
    ("Owner wohnt in Lissabon.", "Owner würde nie in Berlin wohnen.", "fact", N),
    ("Owner hat 2 Katzen.", "Owner hat 2 Schwestern.", "fact", N),
    ("Owner mag Jazz.", "Owner mag Techno.", "preference", N),
    ("Owner arbeitet bei Siemens.", "Owners Schwester arbeitet bei Bosch.", "fact", N),
))

HELD_OUT: tuple[Pair, ...] = tuple(Pair(*row) for row in (
    # written after the rules were tuned on PAIRS and never tuned on: a check that the rules carry to other words
    ("Owner lives in Utrecht.", "Owner now lives in Rotterdam.", "fact", S),
    ("Owner lives in Cork.", "Owner moved back to Dublin.", "fact", S),
    ("Owner works for Siemens Energy.", "Owner works for Vestas.", "fact", S),
    ("Owner's boss is Karen Li.", "Owner's boss is Marcus Bell.", "relationship", S),
    ("Owner is married to Hugo.", "Owner and Hugo divorced.", "relationship", S),
    ("Owner drives a Tesla Model 3.", "Owner sold the Tesla Model 3.", "fact", S),
    ("Owner's rent is 1,200 dollars.", "Owner's rent is 1,350 dollars.", "fact", S),
    ("Owner has 4 chickens.", "Owner has 6 chickens.", "fact", S),
    ("Owner is 61 years old.", "Owner is 62 years old.", "fact", S),
    ("Owner's son Leo lives in Vienna.", "Owner's son Leo moved to Graz.", "relationship", S),
    ("Owner wohnt in Köln.", "Owner wohnt jetzt in Bonn.", "fact", S),
    ("Owner arbeitet bei der Telekom.", "Owner arbeitet jetzt bei SAP.", "fact", S),
    ("Owner hat 1 Hund.", "Owner hat 2 Hunde.", "fact", S),  # missed: German plurals are not stemmed
    ("Owner swam 2 km on Saturday.", "Owner swam 3 km on Sunday.", "episode", N),
    ("Owner biked 40 km.", "Owner biked 65 km.", "fact", N),
    ("Owner tipped 5 euros at the café.", "Owner tipped 8 euros at the café.", "fact", N),
    ("Owner's train leaves at 6:40 on Friday.", "Owner's train leaves at 7:10 on Friday.", "fact", N),
    ("Owner lives in Utrecht.", "Owner moved the dinner to Saturday.", "fact", N),
    ("Owner lives in Utrecht.", "Owner moved his pension from Aegon to Nationale Nederlanden.", "fact", N),
    ("Owner works for Vestas.", "Owner switched to a new gym.", "fact", N),
    ("Owner's son Leo lives in Vienna.", "Owner lives in Graz.", "fact", N),
    ("Owner lives in Cork.", "Owner's daughter moved to Dublin.", "fact", N),
    ("Owner has 4 chickens.", "Owner has 4 goats.", "fact", N),
    ("Owner likes Bach.", "Owner likes Chopin.", "preference", N),
    ("Owner ist am Samstag 10 km gelaufen.", "Owner ist am Sonntag 12 km gelaufen.", "fact", N),
    ("Owner hat gestern 3 Bier getrunken.", "Owner hat gestern 5 Bier getrunken.", "fact", N),
    ("Owner wohnt in Köln.", "Owner hat das Abendessen auf Samstag verschoben.", "fact", N),
    ("Owner wohnt in Köln.", "Owners Bruder wohnt in Bonn.", "fact", N),
))
