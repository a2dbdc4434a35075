"""The secret-detection corpus: fake secrets in prose and pasted, each format several ways and in several
languages, and hard negatives that look like them. It is the contract of `twin.text.sensitivity.find_secrets`
(tests/test_secret_corpus.py asserts every secret found and no negative flagged) and the input of
bench/secret_detection.py (detected / missed / false positives per format and per negative class).

Every fake secret is built at runtime from a seeded generator, so no token-shaped literal sits in the source for
secret scanners to flag, and the same corpus comes out on every run. Decisions the corpus records:
- a 40-hex git commit hash is not a secret, nor a 64-hex SHA-256 digest, checksum or transaction hash; a 64-hex
  string labelled as a (private / wallet / secret) key is;
- Bitcoin addresses, Ethereum addresses and extended public keys (xpub) are public;
- a list of BIP-39 words inside a sentence (a shopping list) is not a seed phrase; a whole phrase on its own
  line whose checksum holds is, and so is any run of 12-24 list words after a seed-phrase label.
"""

from __future__ import annotations

import base64
import hashlib
import random
import string
from dataclasses import dataclass

import base58
from mnemonic import Mnemonic

_rng = random.Random(20261201)
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


@dataclass(frozen=True)
class SecretCase:
    """One text holding secrets: `fmt` names the format (a row of the bench table), `values` are the exact
    substrings that must be found (each covered by the findings) and never kept in plain text."""

    fmt: str
    text: str
    values: tuple[str, ...]


def rand(n: int, alphabet: str = ALNUM) -> str:
    """`n` seeded random characters; with a digit, a lower- and an upper-case letter when the alphabet has them."""
    extra = "".join(c for c in "7qZ" if c in alphabet)
    return "".join(_rng.choice(alphabet) for _ in range(n - len(extra))) + extra


def entropy(n: int) -> bytes:
    return bytes(_rng.randrange(256) for _ in range(n))


def luhn(prefix: str) -> str:
    """`prefix` plus its Luhn check digit."""
    total = 0
    for i, ch in enumerate(reversed(prefix)):
        d = int(ch) * (1 if i % 2 else 2)
        total += d - 9 if d > 9 else d
    return prefix + str((10 - total % 10) % 10)


def iban(country: str, bban: str) -> str:
    numeric = int("".join(str(int(c, 36)) for c in bban + country + "00"))
    return f"{country}{98 - numeric % 97:02d}{bban}"


def seed(language: str = "english", strength: int = 128) -> str:
    """A BIP-39 phrase whose checksum holds (the wordlist's own encoder, seeded entropy)."""
    return Mnemonic(language).to_mnemonic(entropy(strength // 8))


def wif(compressed: bool = True, testnet: bool = False) -> str:
    payload = bytes([0xEF if testnet else 0x80]) + entropy(32) + (b"\x01" if compressed else b"")
    return base58.b58encode_check(payload).decode()


def extended_private_key(version: bytes = bytes.fromhex("0488ADE4")) -> str:
    """A BIP-32 extended private key (`xprv…` for the default version): depth, fingerprint, child, chain, key."""
    return base58.b58encode_check(version + bytes(9) + entropy(32) + b"\x00" + entropy(32)).decode()


def extended_public_key() -> str:
    return base58.b58encode_check(bytes.fromhex("0488B21E") + bytes(9) + entropy(32) + b"\x02" + entropy(32)).decode()


def bitcoin_address() -> str:
    return base58.b58encode_check(b"\x00" + entropy(20)).decode()


def pem_body(lines: int = 6, width: int = 64) -> str:
    raw = base64.b64encode(entropy(lines * width * 3 // 4)).decode()
    return "\n" + "\n".join(raw[i:i + width] for i in range(0, len(raw), width)) + "\n"


def pem(label: str, body: str, block: str = "") -> str:
    marker = f"{label} PRIVATE".strip() + f" KEY{block}-----"
    return f"-----BEGIN {marker}{body}-----END {marker}"


def app_password(sep: str = " ") -> str:
    return sep.join(rand(4, string.ascii_lowercase)[:4] for _ in range(4))


def bot_token() -> tuple[str, str]:
    """(bot id, the 35-character secret after the colon)."""
    return str(_rng.randrange(10 ** 8, 10 ** 10)), "AA" + rand(33, ALNUM + "_-")


def base32(n: int = 16) -> str:
    return "".join(_rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(n - 1)) + "7"


def case(fmt: str, text: str, *values: str) -> SecretCase:
    for value in values:
        if value not in text:
            raise ValueError(f"corpus: {value!r} is not in {text!r}")
    return SecretCase(fmt, text, values)


def _private_keys() -> list[SecretCase]:
    rsa, ssh, pgp, ec, enc, pkcs8 = (pem_body(n) for n in (12, 5, 9, 3, 10, 8))
    json_body = pem_body(8).replace("\n", "\\n")
    putty = rand(64, ALNUM + "+/") + "\n" + rand(64, ALNUM + "+/") + "\n" + rand(20, ALNUM + "+/") + "="
    one_line = " ".join(rand(64, ALNUM + "+/") for _ in range(3))
    return [
        case("private_key_block", f"Here is my deploy key:\n{pem('RSA', rsa)}\nThanks!", rsa),
        case("private_key_block", pem("OPENSSH", ssh), ssh),
        case("private_key_block", f"My signing key {pem('PGP', pgp, ' BLOCK')} is on the USB stick.", pgp),
        case("private_key_block", f"Der Schlüssel für den Server:\n\n{pem('EC', ec)}\n", ec),
        case("private_key_block", f"La clé chiffrée du VPN :\n{pem('ENCRYPTED', enc)}", enc),
        case("private_key_block", f"{pem('', pkcs8)}\n\nEsa es la clave del servidor de correo.", pkcs8),
        case("private_key_block", '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----'
                                  f'{json_body}-----END PRIVATE KEY-----\\n", "client_email": "bot@x.iam"}}',
             json_body[2:-2]),
        case("private_key_block", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: nas\n"
                                  f"Public-Lines: 2\n{rand(64, ALNUM)}\n{rand(40, ALNUM)}\nPrivate-Lines: 3\n"
                                  f"{putty}\nPrivate-MAC: {rand(64, HEX)}", putty),
        case("private_key_block", f"my key -----BEGIN OPENSSH PRIVATE KEY----- {one_line} -----END OPENSSH PRIVATE "
                                  "KEY----- keep it", one_line),
    ]


def _app_passwords() -> list[SecretCase]:
    out = []
    for template in ("Gmail app password: {}", "Google gave me the app password {} for Thunderbird.",
                     "The app-specific password for the Apple ID is {}.", "Mein App-Passwort für Outlook lautet {}.",
                     "Mot de passe d'application pour Gmail : {}", "La contraseña de aplicación es {}.",
                     "A senha de app do Gmail é {}.", "La password per le app di Google è {}.",
                     "Het app-wachtwoord voor Gmail is {}.", "Пароль приложения: {}", "Gmail的应用专用密码：{}",
                     "Gmailのアプリパスワードは {} です。", "app pw: {}"):
        value = app_password()
        out.append(case("app_password", template.format(value), value))
    apple = app_password("-")
    out.append(case("app_password", f"iCloud app password {apple} (for the calendar sync)", apple))
    upper = app_password().upper()
    out.append(case("app_password", f"Thunderbird password: {upper}", upper))
    return out


def _telegram_tokens() -> list[SecretCase]:
    out = []
    for template in ("My bot token is {}:{}.", "Der Token vom Bot lautet {}:{}", "Le jeton du bot est {}:{} !",
                     "token del bot: {}:{}", "{}:{}", "TELEGRAM_BOT_TOKEN={}:{}", "BotFather said: Use this token "
                     "to access the HTTP API: {}:{} Keep your token secure.",
                     "curl https://api.telegram.org/bot{}:{}/getMe", "bot: '{}:{}'", "Токен бота: {}:{}"):
        bot_id, secret = bot_token()
        out.append(case("telegram_bot_token", template.format(bot_id, secret), secret))
    return out


def _login_pairs() -> list[SecretCase]:
    out = []
    for template in ("login is jdoe / {}", "Netflix: lena@example.com / {}", "The NAS login: admin / {}",
                     "Zugang zum Router: admin / {}", "identifiant : rafael.costa / {}", "usuario rcosta / {}",
                     "Account for the tax portal is max.mueller / {}", "логин: rcosta / {}",
                     "Login Spotify lena@example.org/{}", "账号 rcosta / {}"):
        value = rand(4, string.ascii_letters) + _rng.choice("!&#%$") + rand(6, ALNUM)
        out.append(case("login_pair", template.format(value), value))
    return out


def _crypto_keys() -> list[SecretCase]:
    out = []
    for template in ("My MetaMask private key is {}.", "wallet private key: 0x{}", "Privatschlüssel der Wallet: {}",
                     "Clé privée du portefeuille : {}", "La clave privada de la wallet es {}.",
                     "Chave privada da carteira: 0x{}", "Chiave privata: {}", "Приватный ключ кошелька: {}",
                     "钱包私钥：{}", "ウォレットの秘密鍵: {}", "ETH secret key = {}"):
        value = rand(64, HEX)
        out.append(case("crypto_hex_key", template.format(value), value))
    for text, value in ((f"Paper wallet WIF: {(v := wif())}", v), ((v := wif(compressed=False)), v),
                        (f"Imported {(v := wif(testnet=True))} into Electrum.", v),
                        (f"Die alte Börse gab mir {(v := wif())} als Schlüssel.", v)):
        out.append(case("crypto_wif", text, value))
    for text, value in ((f"Master key {(v := extended_private_key())} from the Trezor.", v),
                        ((v := extended_private_key()), v),
                        (f"testnet: {(v := extended_private_key(bytes.fromhex('04358394')))}", v),
                        (f"zprv de la cartera: {(v := extended_private_key(bytes.fromhex('04B2430C')))}", v)):
        out.append(case("crypto_xprv", text, value))
    return out


def _seed_phrases() -> list[SecretCase]:
    out = []
    en12, en24 = seed(), seed(strength=256)
    out.append(case("seed_phrase", en12, en12))
    out.append(case("seed_phrase", f"My recovery phrase is {en24}.", en24))
    numbered = "\n".join(f"{i}. {w}" for i, w in enumerate(seed().split(), 1))
    out.append(case("seed_phrase", f"Seed words of the Ledger:\n{numbered}", numbered[3:]))
    comma = seed(strength=160).replace(" ", ", ")
    out.append(case("seed_phrase", f"Wallet backup: {comma}", comma))
    upper = seed().upper()
    out.append(case("seed_phrase", f'"{upper}"', upper))
    for language, template in (("french", "Ma phrase de récupération : {}"), ("spanish", "{}"),
                               ("italian", "Frase di recupero: {}"), ("portuguese", "{}"),
                               ("japanese", "シードフレーズ：{}"), ("chinese_simplified", "助记词：{}"),
                               ("czech", "{}"), ("english", "Meine Wiederherstellungsphrase: {}"),
                               ("english", "Сид-фраза: {}"), ("english", "frase semilla {}")):
        value = seed(language, _rng.choice((128, 256)))
        out.append(case("seed_phrase", template.format(value), value))
    typo = " ".join([*seed().split()[:11], "zoo"])
    out.append(case("seed_phrase", f"mnemonic: {typo}", typo))
    return out


def _keypad_codes() -> list[SecretCase]:
    rows = [("The door code is {}.", "1-2-3-4"), ("keypad code {}", "4-7-1-1#"), ("Garage: {}", "4-7-1-1#"),
            ("Türcode: {}", "1-9-8-4"), ("Le digicode est {}", "2-5-8-0#"), ("The code for the gate is {}.", "3-3-7-1"),
            ("Código da porta: {}", "1-2-3-4*"), ("Il codice del cancello è {}.", "9-0-1-2"),
            ("De deurcode is {}.", "5-5-2-1#"), ("Код домофона: {}", "1-4-7-0"), ("Haustür: {}", "2580#"),
            ("The alarm code is {} then OK.", "7-7-1-9"), ("门禁密码是 {}", "3-1-4-1")]
    return [case("keypad_code", text.format(value), value) for text, value in rows]


def _labelled() -> list[SecretCase]:
    rows = [("password", "Owner's Wi-Fi password is {}.", "Weser-Lachs-7714"),
            ("password", "Das WLAN-Passwort lautet {}.", "Sommer2024!"),
            ("password", "Le mot de passe du Wi-Fi est {}.", "Soleil-2291"),
            ("password", "La contraseña del router es {}.", "verde-Alfama-2291"),
            ("password", "A senha do banco é {}.", "Alfama#2291"),
            ("password", "La password della mail è {}.", "Zebra-88-Moon"),
            ("password", "Mijn wachtwoord is {}.", "Zebra-88-Moon"),
            ("password", "Мой пароль от почты: {}", "Zebra-88-Moon"),
            ("password", "Wi-Fi密码是{}。", "Weser7714"),
            ("password", "Wi-Fiのパスワードは {} です。", "kite-7714"),
            ("pin", "My card PIN is {}.", "4821"), ("pin", "Die PIN meiner EC-Karte lautet {}.", "8316"),
            ("pin", "Le code PIN de la carte est {}.", "7302"), ("pin", "El PIN de la tarjeta es {}.", "5519"),
            ("pin", "Il PIN del bancomat è {}.", "6630"), ("pin", "De pincode van mijn pas is {}.", "2207"),
            ("pin", "ПИН-код карты: {}", "9914"), ("pin", "银行卡的暗証番号は{}です。", "1357")]
    out = [case(fmt, text.format(value), value) for fmt, text, value in rows]
    tokens = [("api_token", "My OpenAI key is {}.", "sk-" + "proj-" + rand(40)),
              ("api_token", "GitHub token: {}", "gh" + "p_" + rand(36)),
              ("api_token", "npm publish token {}", "npm" + "_" + rand(36)),
              ("api_token", "Clé API de Mistral : {}", rand(32)),
              ("api_token", "Chave de API do Stripe: {}", "sk" + "_live_" + rand(24)),
              ("api_token", "API-Schlüssel für DeepL: {}", rand(36, ALNUM + "-")),
              ("api_token", "age key {}", "AGE-SECRET-KEY-1" + rand(58, string.ascii_uppercase + string.digits)),
              ("otp_secret", "otpauth://totp/GitHub:owner?secret={}&issuer=GitHub", base32(32)),
              ("otp_secret", "Authenticator setup key: {}",
               " ".join(base32(16)[i:i + 4].lower() for i in range(0, 16, 4))),
              ("card_number", "Visa {} exp 09/28", luhn("4" + "1" * 14)),
              ("iban", "IBAN: {}", iban("DE", "37040044" + "0532013000"))]
    out += [case(fmt, text.format(value), value) for fmt, text, value in tokens]
    return out


def _passphrases() -> list[SecretCase]:
    """Several words after a password label: the value is the rest of the clause."""
    rows = [("My password is {}.", "correct horse battery staple"), ("The wifi password is {}.", "three little pigs"),
            ("Owner's laptop password is {}", "purple monkey dishwasher"), ("Password: {}", "let me in please"),
            ("The router password is {}, all lower case.", "blue jeans friday"),
            ("Mein Passwort ist {}.", "grüne Wiese Sonnenschein"), ("Das WLAN-Passwort lautet {}.", "Katze Hund Maus"),
            ("Mon mot de passe est {}.", "cheval correct batterie agrafe"),
            ("Mi contraseña es {}.", "gato azul montaña"), ("A senha do wifi é {}.", "cavalo verde lua"),
            ("Het wachtwoord is {}.", "blauwe fiets regen"), ("Kennwort: {}", "rote Tomaten zum Frühstück"),
            ("wifi pw: {}", "pizza time now")]
    return [case("passphrase", text.format(value), value) for text, value in rows]


def _spoken_codes() -> list[SecretCase]:
    """Codes said the way people say them: spaced digits, "N digits:", restated after a comma, a locker's."""
    rows = [("my pin is 4 digits: {}", "5 9 1 3"), ("My PIN is {}.", "7 2 0 4"),
            ("Meine PIN hat vier Ziffern: {}", "3 8 8 1"), ("I told Mara the code to my locker, it's {}.", "0417"),
            ("The code for the bike lock, it is {}.", "2208"), ("Locker code {}", "6142"),
            ("Gym locker: {}", "3391"), ("Schließfach: {}", "0815"), ("Le code du cadenas, c'est {}.", "9051")]
    return [case("spoken_code", text.format(value), value) for text, value in rows]


def _structured_fields() -> list[SecretCase]:
    """Files whose key names the secret: JSON, YAML, TOML, INI, .env, properties, CSV and Markdown tables."""
    token, key, pin = rand(32, ALNUM), "key-" + rand(32, string.ascii_lowercase + string.digits), "4827"
    return [case("structured_field", '{\n "password": "Sup3rS3cret!",\n "note": "Owner set up the assistant."\n}\n',
                 "Sup3rS3cret!"),
            case("structured_field", f'{{"api_key": "{key}"}}', key),
            case("structured_field", f"homeassistant:\n  username: owner\n  password: Wald-Weg!9\n  token: {token}\n",
                 "Wald-Weg!9", token),
            case("structured_field", '[database]\nuser = "app"\npassword = "t0ml-Secret"\n', "t0ml-Secret"),
            case("structured_field", "[smtp]\nhost=mail.example.org\npassword=ini pass phrase\n", "ini pass phrase"),
            case("structured_field", f"DB_HOST=localhost\nDB_PASS=hunter22x\nSTRIPE_KEY={token}\n",
                 "hunter22x", token),
            case("structured_field", "mail.smtp.password=Pr0perties!\n", "Pr0perties!"),
            case("structured_field", f'{{"bank": {{"pin": {pin}, "wifiPassword": "casa bianca 7"}}}}',
                 pin, "casa bianca 7"),
            case("structured_field", "site,user,password\nexample.com,jdoe,Tr0ub4dor&3\nbank.de,jd,horse staple\n",
                 "Tr0ub4dor&3", "horse staple"),
            case("structured_field", "Dienst;Benutzer;Passwort\nPost;owner;Brief-Kasten-7\n", "Brief-Kasten-7"),
            case("structured_field", "| service | login | mot de passe |\n|---|---|---|\n| banque | moi | Soleil+Lune |\n",
                 "Soleil+Lune")]


SECRETS: list[SecretCase] = [*_private_keys(), *_app_passwords(), *_telegram_tokens(), *_login_pairs(),
                             *_crypto_keys(), *_seed_phrases(), *_keypad_codes(), *_labelled(), *_passphrases(),
                             *_spoken_codes(), *_structured_fields()]

_COMMIT = rand(40, HEX)
_DIGEST = hashlib.sha256(b"twin").hexdigest()
NEGATIVES: list[tuple[str, str]] = [
    *(("number", t) for t in (
        "Owner ran 12 km in 58 minutes.", "The flat has 3 rooms and 2 balconies.", "Owner owns 1,250 books.",
        "The population of Lisbon is 545,000.", "Owner's score was 98 out of 100.", "Owner read 4 5 6 pages.",
        "Die Wohnung hat 84 Quadratmeter.", "Il y a 1 2 3 étapes.", "Owner counted 4711 sheep.",
        "Owner's step count today: 12 345.")),
    *(("date", t) for t in (
        "Owner moved on 2026-03-12.", "The lease ends 12/03/2026.", "Owner's appointment is on 03.12.2026.",
        "Owner was born 9 November 1991.", "Meeting on 12-05-2026 at 9.", "Der Termin ist am 1. Oktober 2026.",
        "Le rendez-vous est le 12/05/26.", "El vuelo sale el 30-11-2026.", "Owner paid on 2026/11/30.",
        "The sprint ends in week 2026-W11.", "Owner's birthday is 1991-11-09.", "The code freeze is on 2026-03-12.",
        "The invoice is dated 30.11.26.", "Owner's visa expires 11/2027.",
        "The Q3 2026 figures are due 2026-10-15T09:00Z.",
        "Owner's house was built in 1984.")),
    *(("price", t) for t in (
        "Owner paid 1,150.00 euros rent.", "The bike cost €1.299,00.", "Coffee is $4.50 here.",
        "Owner's salary is 99,000 euros a year.", "Le loyer est de 1 150 €.", "Der Preis: 49,99 EUR.",
        "The flight was 312 USD one way.", "El menú cuesta 12,50 €.")),
    *(("phone", t) for t in (
        "Owner's phone number is +49 151 2345 6789.", "Call the office at (030) 1234-5678.",
        "Le numéro de Claire : 06 12 34 56 78.", "Mein Handy: 0151-23456789.", "Teléfono: +34 612 345 678.",
        "Owner's mobile ends in 412.", "Press 1-2-3 on the phone menu to reach support.",
        "The US office is at +1 (555) 010-4477.", "Fax: +49 30 1234567-89.")),
    *(("version", t) for t in (
        "Owner upgraded to Python 3.12.1.", "The build took 12.5 s on version 2.7.3-rc1.", "Node v20.11.0 is out.",
        "Owner compared GPT-4o / Claude-3.5-Sonnet.", "Owner runs Debian 12.4 with kernel 6.1.0-18-amd64.",
        "The app is at 1.2.3-beta.4+build.5.")),
    *(("flight", t) for t in (
        "Owner booked flight LH2023 to Munich.", "Owner flies TAP TP 539 back.", "El vuelo IB3170 sale a las 10:45.",
        "Le vol AF 1234 est retardé.", "Owner is on BA0117 to New York.")),
    *(("order_invoice_tracking", t) for t in (
        "Order number 4417-2291-8830 shipped on 3 May.", "Owner's order 123456789012 was delivered.",
        "Invoice INV-2026-00417 is due.", "Tracking number 1Z999AA10123456784.",
        "DHL Sendungsnummer 00340434161094042557.",
        "Rechnungsnummer 2026-1187.", "La commande n° 5512-8812 est partie.", "Owner's booking code is 482913.",
        "The TAP booking reference is QX7T2M.", "Order #112-4471123-5561234 from Amazon.")),
    *(("isbn", t) for t in (
        "Owner is reading ISBN 978-3-16-148410-0.", "ISBN 9783161484100 is on the list.",
        "The book has ISBN-10 0-306-40615-2.")),
    *(("postcode", t) for t in (
        "Owner lives in 10405 Berlin.", "Le code postal de Claire est 75011.", "Owner's zip code is 10115.",
        "The UK office is at SW1A 1AA.", "CEP 01310-100 em São Paulo.", "Der Postleitzahl-Code ist 80331.")),
    *(("time", t) for t in (
        "The meeting starts at 14:30 and ends at 15:45.", "Owner wakes at 6:15 am.", "Le train part à 8h42.",
        "Owner's run took 1:02:33.", "Das Konzert beginnt um 20 Uhr.")),
    *(("hex_colour", t) for t in (
        "The brand colour is #1a2b3c.", "Owner painted the wall #FFAA00.", "Use color: #0f0 for the link.",
        "The theme uses #4b5563 and #f9fafb.")),
    *(("git_commit", t) for t in (
        f"Owner fixed the bug in commit {_COMMIT}.", "Owner merged commit a3f9c2e into main.",
        f"API key was leaked in commit {_COMMIT}, rotated since.", f"git revert {_COMMIT[:12]}",
        f"The token fix landed in {_COMMIT}.")),
    *(("hash_digest", t) for t in (
        f"sha256sum of the ISO: {_DIGEST}", f"The checksum is {_DIGEST}.", f"docker pull nginx@sha256:{_DIGEST}",
        f"The transaction hash is 0x{_DIGEST}.", f"Owner's SSH key fingerprint is SHA256:{rand(43, ALNUM + '+/')}.")),
    *(("uuid", t) for t in (
        "The request id was 123e4567-e89b-12d3-a456-426614174000.",
        "Device UUID: 9f8b6c1a-3d2e-4f5a-9b8c-7d6e5f4a3b2c.",
        "Owner's Firefox profile is 4a1b2c3d-0000-1111-2222-333344445555.")),
    *(("room", t) for t in (
        "Owner is staying in room 4821.", "room 4111", "The meeting is in Raum 3.14.", "Salle 204, bâtiment B.",
        "Owner's locker number is 233.")),
    *(("coordinates", t) for t in (
        "The cabin is at 38.7223° N, 9.1393° W.", "GPS: 52.5200, 13.4050", "Meet at 48°51'24\"N 2°21'03\"E.",
        "Coordinates -33.8688, 151.2093.")),
    *(("crypto_public", t) for t in (
        f"Send the BTC to {bitcoin_address()}.", f"My ETH address is 0x{rand(40, HEX)}.",
        f"Watch-only wallet: {extended_public_key()}",
        "The bc1 address is bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq.")),
    *(("word_list", t) for t in (
        "Owner will buy milk, bread, cheese, apple, banana, tomato, potato, onion, garlic, pepper, salt and sugar.",
        "milk, bread, cheese, apple, banana, tomato, potato, onion, garlic, pepper",
        "Owner's favourite words: about above absent absorb abstract absurd abuse access accident account accuse.",
        "Owner learned the words animal, autumn, basket, bicycle, butter, candle, carpet, castle, cattle, chicken, "
        "coffee, cotton, dinner today.", "The seed for the garden beds: tomato, pepper, onion and garlic.")),
    *(("password_talk", t) for t in (
        "Owner forgot the password to the old Yahoo account.", "The Wi-Fi password is on a sticker under the router.",
        "Owner's password manager is 1Password.", "The password is very much like this one.",
        "Das Passwort ist sehr kurz aber gut.", "Le mot de passe doit avoir dix caractères.",
        "Owner needs an app password for Thunderbird.", "The seed phrase is written on paper in the safe.",
        "Owner's door code changed last week.", "My backup codes are in the safe.", "The PIN pad was broken.")),
    *(("passphrase_talk", t) for t in (
        "My password manager is great.", "the password policy changed", "I forgot my password again.",
        "My password is on a sticker under the router.", "The password is twelve characters long.",
        "The new password is something I can remember.", "My password is the name of my first dog.",
        "Her password is Anna's birthday.", "The wifi password is written on the fridge.",
        "My password is changed every month.", "The password is easy to guess.", "Password: see the vault.",
        "Mein Passwort ist zu kurz.", "Le mot de passe est dans le tiroir.", "La contraseña es muy larga.",
        "Password reset link sent to the owner.", "My PIN is the same as before.", "The door code is new.",
        "The password was shared with Anna by mistake.", "Owner's password: stored in Bitwarden.")),
    *(("structured_talk", t) for t in (
        '{"password_hint": "first pet", "max_tokens": 4096, "token_type": "bearer"}',
        "password: ${DB_PASSWORD}\nuser: app\n", '{"password": "", "pin_length": 4}',
        "api_key = <your key here>\n", "site,user,password\n", "PASSWORD_MIN_LENGTH=12\nTOKEN_LIMIT=4000\n",
        "name,role,team\nAnna,lead,platform\nBen,dev,apps\n", "password: required\ntoken: null\n",
        "Tip for a good password: three random words.", "| field | meaning |\n|---|---|\n| password | the login |\n")),
    *(("slash_pairs", t) for t in (
        "Owner uses TCP / IP daily.", "Owner's ratio is 16 / 9.", "Read / Write access for the team.",
        "The account page lives at src/main.rs in the repo.", "Login stats: 2024 / 2025 compared.",
        "Owner's login history shows Berlin / Lisbon.", "Owner emailed lena@example.com / cc Anna.")),
    *(("prose_languages", t) for t in (
        "Owner hat am 8. Oktober 2026 die Meldebescheinigung bekommen.", "Owner a payé 45 € pour 3 places.",
        "Owner compró 2 kilos de naranjas por 3,50 €.", "Owner pagou 12 euros no restaurante às 21h.",
        "Owner ha preso il treno delle 7:15 per Milano.", "Owner heeft 3 katten en woont op nummer 12.",
        "Owner купил 2 билета за 1500 рублей.", "Owner在2026年春节和陈伟一家一起包了饺子。",
        "Ownerは2026年3月12日に引っ越しました。", "Der Code der Seite ist Open Source.",
        "Le code de la route change en 2027.", "El código de la cena es formal.", "Il codice è su GitHub.",
        "Код программы лежит в репозитории.", "密码学是一门有趣的学科。", "パスワードを忘れました。")),
    *(("keypad_lookalike", t) for t in (
        "Steps 1-2-3 of the recipe are easy.", "The match ended 2-1.", "Gate B22 boards at 10:40.",
        "Door 4 is the exit.", "The garage holds 2 cars.", "Garage: 2 spots, door: 1.", "Tor: 3-1 für Bayern.")),
]
"""`(class, text)`: texts that hold no secret value (each class a row of the bench table)."""
