"""Secret detection (seed 003 sensitivity inference) and redaction: fake secrets in sentences are found and
redacted with the sentence kept; ordinary numbers, dates, codes, versions and hashes are left alone; the eval
memories; linear time on 1 MB. Every fake secret is built at runtime so no token-shaped literal sits in the
source for secret scanners to flag."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest
from secret_corpus import iban, luhn

from twin.text.sensitivity import (
    DEFAULT_SENSITIVITY,
    REDACTED,
    SENSITIVITIES,
    contains_secret,
    find_secrets,
    infer_sensitivity,
    redact,
)

_rng = random.Random(20261130)
ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    """``n`` fake random characters of ``alphabet``, ending in a digit, a lower- and an upper-case letter when the
    alphabet has them (so every fake token has the character classes of a real one)."""
    extra = "".join(c for c in "7qZ" if c in alphabet)
    return "".join(_rng.choice(alphabet) for _ in range(n - len(extra))) + extra


def grouped(value: str, size: int = 4) -> str:
    return " ".join(value[i:i + size] for i in range(0, len(value), size))


def pem(label: str, block: str = "") -> str:
    """A fake PEM block; the marker is assembled here so the source holds no private-key header."""
    marker = f"{label} PRIVATE" + f" KEY{block}-----"
    return f"-----BEGIN {marker}{PEM_BODY}-----END {marker}"


HEX40 = rand(40, "0123456789abcdef")
PEM_BODY = "\n" + "\n".join(rand(64, ALNUM + "+/") for _ in range(4)) + "\n"
CARD_VISA = luhn("4" + "1" * 14)
CARD_MC = luhn("5" + "5" * 14)
CARD_AMEX = luhn("37" + "82822463" + "1000")
IBAN_DE = iban("DE", "37040044" + "0532013000")
IBAN_GB = iban("GB", "NWBK" + "60161331926819")
SEED_WORDS = "abandon ability able about above absent absorb abstract absurd abuse access accident"
SEED_24 = SEED_WORDS + " account accuse achieve acid acoustic acquire across action actor actress actual adapt"

# (sentence, the exact value that must disappear)
SECRETS: list[tuple[str, str]] = [
    (f"Owner's OpenAI key is {(v := 'sk-' + 'proj-' + rand(40))}.", v),
    (f"Owner's Anthropic key for the bot is {(v := 'sk-' + 'ant-api03-' + rand(48))}.", v),
    (f"Owner's GitHub token is {(v := 'gh' + 'p_' + rand(36))}.", v),
    (f"The OAuth app returned {(v := 'gh' + 'o_' + rand(36))} for Owner.", v),
    (f"Owner created the fine-grained token {(v := 'github' + '_pat_' + rand(22) + '_' + rand(59))}.", v),
    (f"The Slack bot token {(v := 'xo' + 'xb-' + '1234567890-' + rand(24))} is in the env file.", v),
    (f"Owner's Slack user token: {(v := 'xo' + 'xp-' + rand(40, string.ascii_lowercase + string.digits))}", v),
    (f"Owner's AWS access key id is {(v := 'AK' + 'IA' + rand(16, string.ascii_uppercase + string.digits))}.", v),
    (f"Owner's aws secret access key is {(v := rand(40, ALNUM + '/+'))}.", v),
    (f"The Google Maps key is {(v := 'AI' + 'za' + rand(35, ALNUM + '_-'))}.", v),
    (f"Owner's Stripe live key is {(v := 'sk' + '_live_' + rand(24))}.", v),
    (f"The restricted Stripe key {(v := 'rk' + '_live_' + rand(24))} is used by the shop.", v),
    (f"Owner's Home Assistant token is {(v := 'ey' + 'JhbGciOiJIUzI1NiJ9.' + rand(30) + '.' + rand(43))}.", v),
    (f"The tidebell Telegram bot token is 7012345678:{(v := rand(35, ALNUM + '_-'))}.", v),
    (f"Owner's Mistral API key: {(v := rand(32))}", v),
    (f"The Spotify client secret = {(v := rand(32, string.hexdigits.lower()))}", v),
    (f"Owner's Hugging Face token is {(v := 'hf' + '_' + rand(34))}.", v),
    (f"Owner's GitLab token is {(v := 'gl' + 'pat-' + rand(20))}.", v),
    (f"The NAS admin URL is https://owner:{(v := 'Pa55-' + rand(8))}@nas.local:5001/.", v),
    ("Owner's password is " + (v := "hunter" + "2") + ".", v),
    ("Owner's Wi-Fi password is " + (v := "Weser-Lachs-" + "7714-kite") + ".", v),
    ("The Wi-Fi password: " + (v := "Tr0ub4dor" + "&3") + " (case matters).", v),
    ("Owner's old laptop password was '" + (v := "correct horse battery staple") + "'.", v),
    ("Owner's SSH key passphrase for the NAS is " + (v := "otto-" + "monstera-42") + ".", v),
    ("Owner's iPhone passcode is " + (v := "9" + "30271") + ".", v),
    ("Owner's card PIN is " + (v := "48" + "21") + ".", v),
    ("The PIN code for the office printer is " + (v := "09" + "17") + ".", v),
    ("Owner's street door code for the building is " + (v := "47" + "19B") + ".", v),
    ("The alarm code at the parents' house is " + (v := "55" + "13") + ".", v),
    ("The safe combination is " + (v := "12-" + "34-56") + ".", v),
    ("Owner's bike is locked with a combination lock set to " + (v := "03" + "81") + ".", v),
    ("Owner's Telekom SIM card PUK is " + (v := "8392" + "0417") + ".", v),
    ("Owner's Bitwarden recovery code is " + (v := "7KQP-2MXD-" + "93FA-ZL0T") + ".", v),
    (f"Owner's Visa card number is {(v := CARD_VISA)}, expiring 09/27.", v),
    (f"Owner paid with card {(v := grouped(CARD_MC))} at the bakery.", v),
    (f"The company Amex is {(v := CARD_AMEX[:4] + '-' + CARD_AMEX[4:10] + '-' + CARD_AMEX[10:])}.", v),
    (f"Owner's DKB IBAN is {(v := IBAN_DE)}.", v),
    (f"Rent goes to {(v := grouped(IBAN_GB))} every month.", v),
    ("Owner's US bank account number is " + (v := "0001" + "23456789") + ".", v),
    ("The routing number is " + (v := "0210" + "00021") + ".", v),
    ("Owner's UK sort code is " + (v := "20-" + "00-00") + ".", v),
    ("Owner's Australian BSB is " + (v := "062-" + "000") + ".", v),
    (f"Owner's deploy key:\n{pem('RSA')}", PEM_BODY),
    (pem("OPENSSH"), PEM_BODY),
    (f"Owner's signing key {pem('PGP', ' BLOCK')}", PEM_BODY),
    (f"Owner's Ledger seed phrase is {(v := SEED_WORDS)}.", v),
    (f"The recovery phrase: {(v := SEED_24)}.", v),
    ("Owner's SSN is " + (v := "078-" + "05-1120") + ".", v),
    ("Owner's passport number is " + (v := "C01X" + "00T47") + ".", v),
    ("Owner's tax ID is " + (v := "12 345 " + "678 901") + ".", v),
    # multilingual
    ("Owners WLAN-Passwort lautet " + (v := "Weser" + "Lachs77") + ".", v),
    ("Die PIN meiner EC-Karte lautet " + (v := "83" + "16") + ".", v),
    ("Owners Steuer-ID ist " + (v := "12 345 " + "678 903") + ".", v),
    ("La contraseña del Wi-Fi es " + (v := "verde-" + "Alfama-2291") + ".", v),
    ("El NIF de Owner es " + (v := "1234" + "5678Z") + ".", v),
    ("Le mot de passe du Wi-Fi est " + (v := "Soleil" + "-2291") + ".", v),
    ("Le code PIN de la carte est " + (v := "73" + "02") + ".", v),
    ("A senha do router é " + (v := "Alfama" + "#2291") + ".", v),
    ("Owner的Wi-Fi密码是" + (v := "Weser" + "7714") + "。", v),
    ("OwnerのWi-Fiパスワードは " + (v := "kite-" + "7714") + " です。", v),
    # breaker review: abbreviated password labels (pw/pwd/passwd/pass + ":"/"="/"is")
    ("wifi pw: " + (v := "hunter2" + "xyz"), v),
    ("Wi-Fi pw is " + (v := "Tr0ub4dor" + "&3"), v),
    ("Owner's NAS pwd: " + (v := "Zq!88" + "-lime"), v),
    ("Wi-Fi PW = " + (v := "hunter2" + "xyz"), v),
    ("passwd: " + (v := "s3cr" + "et"), v),
    # a user name and a password, a plain word when assigned or after a labelled user name
    ("user=root pass=" + (v := "to" + "or"), v),
    ("user: root pass: " + (v := "to" + "or"), v),
    ("login admin / password " + (v := "admin" + "123"), v),
    # 2FA / recovery / backup codes, one or a list
    ("GitHub 2FA backup codes: " + (v := "4f8a-91bc " + "22de-77aa 0c3e-5b19"), v),
    ("recovery code " + (v := "8H2K-" + "99QZ-LM3P"), v),
    ("Owner's Google backup codes are " + (v := "4821 9931 " + "0042 1177") + ".", v),
    # a code word + a short digit sequence
    ("garage opener code is " + (v := "04" + "51"), v),
    ("door code " + (v := "77" + "31"), v),
    ("alarm code: " + (v := "12" + "34#"), v),
    ("safe combination is " + (v := "12-34-" + "56"), v),
    ("gate code " + (v := "25" + "80"), v),
    ("Owner's alarm system code is " + (v := "77" + "19*") + ".", v),
    ("The key box code is " + (v := "08" + "15") + ".", v),
    ("For the bike shed the code is " + (v := "44" + "71") + ".", v),
    # tester review: a long lowercase passphrase, env-style assignments, letter/digit recovery codes, a login pair,
    # the value before "is my password", a dial combination, more languages
    ("The wifi password is " + (v := "correcthorse" + "battery"), v),
    ("export AWS_SECRET_ACCESS_KEY=" + (v := "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"), v),
    ("aws_secret_access_key = " + (v := rand(40, ALNUM + "/+")), v),
    ("export GITHUB_TOKEN='" + (v := rand(36)) + "'", v),
    ("DB_PASSWORD=" + (v := "Sommer" + "2024!"), v),
    ("Recovery codes for Proton: " + (v := "1a2b3c4d 5e6f7g8h " + "9i0j1k2l"), v),
    ("login for netflix: lena@example.com / " + (v := "Tr0ub4dor" + "&3"), v),
    ("user: lena / " + (v := "Zebra-88-" + "Moon"), v),
    ((v := "Hunter" + "2") + " is my password", v),
    ((v := "Tr0ub4dor" + "&3") + " is my Wi-Fi password", v),
    ("'" + (v := "Weser" + "-7714") + "' was the password for the old router.", v),
    ("The safe combination is " + (v := "12 34 " + "56") + ".", v),
    ("Мой пароль от почты: " + (v := "Zebra-88-" + "Moon"), v),
    ("Hasło do banku: " + (v := "Zebra-88-" + "Moon"), v),
    ("La password è " + (v := "Zebra-88-" + "Moon") + ".", v),
    ("Mijn wachtwoord is " + (v := "Zebra-88-" + "Moon") + ".", v),
    ("Wi-Fi şifresi: " + (v := "Zebra-88-" + "Moon"), v),
    # tester review 2: a setting verb before "password … to", "pass" after a labelled user name, a date-like dial
    # after a combination keyword, a keypad code
    ("I changed my laptop password to " + (v := "Kiwi!Mango" + "42") + " today.", v),
    ("I set my laptop password to " + (v := "Fr" + "0g") + ".", v),
    ("Owner set the router password to " + (v := "Zebra!" + "99") + ".", v),
    ("Owner reset the Wi-Fi password to '" + (v := "open " + "sesame") + "'.", v),
    ("Login for the tax portal: user max.mueller, pass " + (v := "Sommer" + "2024") + "!", v),
    ("username lena pw " + (v := "Zebra-88-" + "Moon"), v),
    ("The locker combination at the gym is " + (v := "4-17-" + "33") + ".", v),
    ("The padlock is set to " + (v := "12-0" + "5-26") + ".", v),
    ("The door code is " + (v := "12" + "#") + ".", v),
]

ORDINARY = [
    "Owner's phone number is +49 151 2345 6789.",
    "Owner's Portuguese mobile number ends in 412 and is kept for bank verification codes.",
    "Owner paid 1,150.00 euros rent on 2026-11-30.",
    "Owner was born on 9 November 1991 in Coimbra.",
    "The meeting starts at 14:30 and ends at 15:45.",
    "Owner upgraded to Python version 3.12.1 yesterday.",
    "Order number 4417-2291-8830 shipped on 3 May 2026.",
    "Owner's order 123456789012 was delivered.",
    "Owner booked flight LH2023 to Munich and TAP TP 539 back.",
    "Owner's TAP booking reference is QX7T2M.",
    "Owner lives at Kollwitzstraße 41, 10405 Berlin.",
    "Owner is staying in room 4821 of the Hotel Niwa.",
    "Owner is reading ISBN 978-3-16-148410-0 and ISBN 9783161484100.",
    "Owner noted the number 4111111111111112, which fails the Luhn check.",
    "The request id was 123e4567-e89b-12d3-a456-426614174000 in the logs.",
    f"Owner fixed the bug in commit {HEX40}.",
    "Owner merged commit a3f9c2e into main.",
    "Owner forgot the password to the old Yahoo account.",
    "I forgot my password.",
    "The PIN pad at the supermarket was broken.",
    "Owner stores all passwords in Bitwarden.",
    "Owner's password manager is 1Password.",
    "Owner's Visa credit card ending in 4417 expires in September 2027.",
    "Owner received the German tax identification number by post.",
    "Owner's passport scan shows the full legal name Rafael Costa Mendes.",
    "Owner's Portuguese passport expires on 3 February 2027.",
    "Owner's Portuguese bank account is with Millennium BCP.",
    "Owner changed the Wi-Fi password on 12 May 2025.",
    "The Wi-Fi password is on a sticker under the router.",
    "Owner's door code changed last week.",
    "Owner's salary is 99,000 euros gross a year.",
    "Owner's blood pressure was 128/82 at the pharmacy.",
    "Owner runs 700 km per pair of Asics Novablast 4 shoes.",
    "Owner's Lichess rapid rating is 1620.",
    "The API rate limit is 3,000 requests per minute.",
    "The token budget of the model is 128000.",
    f"Owner's public key is ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rand(43)}.",
    "Owner's secret recipe is 500 g flour and 375 g water.",
    "The IMEI of Owner's phone is 490154203237518.",
    "Owner's IBAN-like note DE00 1234 5678 9012 3456 78 fails mod-97.",
    "Owner's zip code is 10115 and the area code 030.",
    "Owner's Berlin internet is a 250 Mbit fibre line from 1&1.",
    "Owner hat sein Passwort vergessen.",
    "Owner hat am 8. Oktober 2026 die Meldebescheinigung bekommen.",
    "La contraseña del banco caduca el 30/11/2026.",
    "El vuelo IB3170 sale a las 10:45.",
    "Le code postal de Claire est 75011.",
    "Owner在2026年春节和陈伟一家一起包了饺子。",
    "Owner's AWS region is eu-central-1.",
    "Owner's recovery phrase is written on paper and kept in the safe.",
    "Owner's PIN was changed in 2019.",
    "The build took 12.5 s on version 2.7.3-rc1.",
    "Owner's account number ends in 6789.",
    "Owner's Wi-Fi password is WPA2-protected.",
    "Owner's Steam password is now 20 characters long.",
    "The PIN for the new card arrived on 12.05.2026.",
    f"API key was leaked in commit {HEX40}.",
    f"Owner's SSH key fingerprint is SHA256:{rand(43, ALNUM + '+/')}.",
    "Owner's secret to good sourdough is a 72% hydration.",
    "La clave del éxito es la paciencia.",
    "Owner earned 4,000 euros; invoice 4111 1111 1111 1111.",
    # breaker review: dates, times, prices, postcodes, counts, years, versions, models, weeks, flights and "code"s
    "Owner moved on 12 March 2026.",
    "The lease starts on 2026-03-12 at 09:30.",
    "Owner paid 5,200 euros for the sofa.",
    "Owner's new flat is in 10437 Berlin.",
    "Owner runs 5 km every morning and has 2 cats.",
    "Owner moved to Berlin in 2025.",
    "Owner upgraded to Python 3.11.7.",
    "The area code of Lisbon is 21.",
    "Owner's area code is 0351.",
    "Owner always forgets the zip code.",
    "The zip code is 10115.",
    "Owner's postal code is 10437.",
    "The dress code is casual.",
    "Owner has a code review on Tuesday.",
    "Owner wrote code for 3 hours.",
    "Owner learned to code in 2014.",
    "The code freeze is on 2026-03-12.",
    "The code for the race was 2026.",
    "The HTTP status code was 5000.",
    "Owner's booking code is 482913.",
    "Owner bought the Sony WH-1000XM5 headphones.",
    "The sprint ends in ISO week 2026-W11.",
    "Owner flies LH 1173 to Lisbon.",
    "Owner will pass the exam.",
    "Owner's boarding pass: gate B22, seat 14A.",
    "Owner's ski pass is 320CHF.",
    "Owner's gym pass is 49 euros a month.",
    "The pwd is /home/owner/code after cd.",
    "2FA codes are sent to Owner by SMS.",
    # tester review: descriptions of a password, settings named like secrets, and look-alikes of the new rules
    "The password is complicated.",
    "the password is required",
    "password is forgotten",
    "The password is automatically generated.",
    "The Wi-Fi password is alphanumeric.",
    "The password is straightforward to remember.",
    "Owner changed the password successfully.",
    "This is my password manager.",
    "Netflix is my password problem.",
    "1Password is my password manager.",
    "room 4111",
    f"Order number {CARD_VISA}",
    "pin of the map",
    "code name Falcon",
    "TOKEN_LIMIT=4000",
    "MAX_TOKENS=4096",
    "GITHUB_TOKEN=$GITHUB_TOKEN",
    "PRIVATE_KEY=/home/owner/.ssh/id_rsa",
    "Login stats: 2024 / 2025 compared.",
    "My backup codes are in the safe.",
    "The backup codes are 2 of 10 left.",
    "Мой пароль надёжный.",
    # tester review 2: look-alikes of the setting-verb, user-then-pass and dial rules
    "I set my alarm to 7:30.",
    "The password to the shared drive is in the vault.",
    "We changed the meeting to 14:00.",
    "My bus pass is 49 euros a month.",
    "I changed my password to something stronger.",
    "I switched my password to 1Password.",
    "Owner moved all passwords to LastPass.",
    "I changed the lock and the password to the NAS yesterday.",
    "The user Anna, pass me the salt.",
    "The combination lock was bought on 12-05-2026.",
    "The bike lock arrived on 2026-05-12.",
    "The door code is 12.",
]


def test_levels():
    assert SENSITIVITIES == ("public", "internal", "private", "sensitive")
    assert DEFAULT_SENSITIVITY == "private"


@pytest.mark.parametrize(("sentence", "value"), SECRETS, ids=[f"secret{i:02d}" for i in range(len(SECRETS))])
def test_secret_is_sensitive_and_redacted(sentence, value):
    assert value in sentence
    assert infer_sensitivity(sentence) == "sensitive"
    assert contains_secret(sentence)
    redacted = redact(sentence)
    assert redacted == sentence.replace(value, REDACTED)
    assert redact(redacted) == redacted
    assert not contains_secret(redacted)


@pytest.mark.parametrize("sentence", ORDINARY, ids=[f"ordinary{i:02d}" for i in range(len(ORDINARY))])
def test_ordinary_sentence_is_private_and_unchanged(sentence):
    assert find_secrets(sentence) == []
    assert infer_sensitivity(sentence) == "private"
    assert redact(sentence) == sentence


def test_counts():
    assert len(SECRETS) >= 40 and len(ORDINARY) >= 40


def test_several_secrets_in_one_text_each_redacted():
    text = "Owner's PIN is 4821, the door code is 7730 and the Wi-Fi password is Weser-7714."
    expected = "Owner's PIN is [redacted], the door code is [redacted] and the Wi-Fi password is [redacted]."
    assert redact(text) == expected
    assert [s.kind for s in find_secrets(text)] == ["pin", "pin", "password"]


def test_two_rules_on_one_value_report_it_once():
    """"garage opener code is 0451" is both a named access code and a bare "code" + PIN: one finding."""
    assert [s.kind for s in find_secrets("The garage opener code is 0451.")] == ["pin"]


def test_password_to_a_service_is_not_the_secret():
    """Without a setting verb "password to X" names what the password is for: the secret is the value after "is"."""
    text = "my password to Office365 is " + "hunter" + "2x"
    assert [text[s.start:s.end] for s in find_secrets(text)] == ["hunter2x"]


def test_quoted_password_of_plain_words_counts_and_keeps_its_quotes():
    assert redact("Owner's password is 'open sesame'.") == "Owner's password is '[redacted]'."


def test_telegram_bot_id_is_kept_and_its_secret_redacted():
    secret = rand(35, ALNUM + "_-")
    assert redact(f"Bot token 7012345678:{secret} works.") == "Bot token 7012345678:[redacted] works."


def test_redacted_text_is_not_sensitive_and_empty_text_is_private():
    assert infer_sensitivity("Owner's Wi-Fi password is [redacted].") == "private"
    assert infer_sensitivity("") == "private" and redact("") == ""


def test_overlapping_findings_merge_into_one_redaction():
    token = "sk-" + rand(40)
    assert redact(f"API key: {token}") == f"API key: {REDACTED}"


@pytest.mark.eval
def test_eval_memories(eval_dir: Path):
    """The 15 memories marked sensitive in eval/ are inferred sensitive; none of the other 486 are."""
    rows = [json.loads(line) for line in (eval_dir / "memories.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    marked = [r["content"] for r in rows if r["sensitive"]]
    others = [r["content"] for r in rows if not r["sensitive"]]
    assert len(marked) == 15
    missed = [c for c in marked if infer_sensitivity(c) != "sensitive"]
    flagged = [c for c in others if infer_sensitivity(c) == "sensitive"]
    assert missed == []
    assert flagged == [], f"{len(flagged)} of {len(others)} ordinary memories flagged"
    for content in marked:
        assert REDACTED in redact(content)
        assert not contains_secret(redact(content))


@pytest.mark.parametrize("unit", [
    "Owner paid 1,150 euros on 2026-11-30 at 14:30; order 4417-2291-8830, version 3.12.1. ",
    "password password is PIN code is the door code for the ",
    "4111 1111 1111 1111 2222 3333 4444 ",
    pem("RSA").split("\n")[0] + " ",
    "token " + "Ab1" * 200 + " ",
    "a",
    "1",
    "seed phrase is " + "word " * 30,
    "DE89 3704 0044 0532 0130 00 ",
    "pw: pass: code is user=a pass= ",
    "backup codes: 4f8a-91bc 1234 ",
    "DB_API_KEY=a_ export X_TOKEN=",
    "login: a@b.c / user: a / ",
    "Hunter2 is my Hunter2 was the x ",
    "recovery codes: 1a2b3c combination is 1 2 3 ",
    "The password is abcdefghijklmnop ",
    "пароль şifre: ",
    "I set my password to x changed the ",
    "user a, pass user b pass ",
    "locker combination is 1-2-3-4-",
])
@pytest.mark.timeout(60)
@pytest.mark.slow
def test_one_megabyte_of_worst_case_input_finishes(unit):
    """No catastrophic backtracking: a megabyte of repeated near-secrets is scanned in linear time (about 0.5 s
    here; the generous timeout only catches a regex that goes quadratic). Speed itself is not asserted."""
    text = (unit * (1_000_000 // len(unit) + 1))[:1_000_000]
    assert isinstance(redact(text), str)
