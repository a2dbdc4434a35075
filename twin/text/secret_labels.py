"""Labels of secrets in several languages: the keywords after which a value is a password, a PIN or code, a
token or key, an account or national-id number, a seed phrase, a login, a door, a TOTP seed.

`twin.text.sensitivity` builds its rules from these (a label, a separator, a value of the right shape). Each label is
one regex string from `keyword()`: case-insensitive ASCII/Latin words with word boundaries, words of scripts
written without spaces (Chinese, Japanese, Korean) as they are, case-sensitive acronyms, and words that must
not follow ("password manager"). Languages: English, German, French, Spanish, Portuguese, Italian, Dutch,
Swedish, Polish, Turkish, Russian, Chinese, Japanese, Korean (not every label in every one). Constants only.
"""

from __future__ import annotations

import re

_B = r"(?<![A-Za-z0-9_])"  # left boundary that also works before non-ASCII words
E = r"(?![A-Za-z0-9_-])"
"""Right boundary of a label or token: "passwords", "password-protected" and "PIN-pad" are other words."""
# First letter of each alternative (after "|", "(?:" or an optional group): a cheap look-ahead that lets the
# regex engine skip most positions, 2-3x faster than trying every alternative everywhere.
_INITIAL = re.compile(r"(?:^|\||\(\?:|\)[?*])(\w)")


def keyword(ascii_words: str, cjk_words: str = "", upper_words: str = "", avoid: str = "") -> str:
    """A label regex: an alternation of case-insensitive ASCII/Latin `ascii_words` (with a left boundary), CJK
    `cjk_words` and case-sensitive `upper_words` acronyms, then the right boundary `E`, and not followed by
    one of `avoid` ("password manager"); a look-ahead on the alternatives' first letters lets the engine skip
    most positions."""
    initials = set(_INITIAL.findall(ascii_words + "|" + upper_words + "|" + cjk_words))
    parts = [rf"{_B}(?i:{ascii_words})"]
    if upper_words:
        parts.append(rf"{_B}(?:{upper_words})")
    if cjk_words:
        parts.append(f"(?:{cjk_words})")
    after = rf"(?!\s+(?i:{avoid})\b)" if avoid else ""
    return rf"(?i:(?=[{''.join(sorted(initials))}]))(?:{'|'.join(parts)}){E}{after}"


VERB = (r"(?i:(?:(?:is|was|are|were|ist|war|lautet|sind|es|era|est|était|é|è)"
        r"(?:\s+(?:now|still|currently|jetzt|ahora|maintenant|agora))?(?:\s+(?:set|changed|reset|updated)\s+to)?"
        r"|(?:set|changed|reset|updated)\s+to|reads))")
"""The verb between a label and its value ("is", "ist", "lautet", "est", "es", "é", "set to", "reads")."""
NOT_A_VALUE = frozenset("true false null none nil undefined unknown empty required optional hidden unset n/a".split())
"""Words a form or a config file writes where a value would be: no secret."""


PASSWORD = keyword(
    r"pass(?:word|phrase|code|wort|wd)|kennwort|contraseña|contrasena|clave|mot\s+de\s+passe|senha|palavra-passe"
    r"|wachtwoord|lösenord|hasło|parola\s+d'ordine|wi-?fi\s+key|wlan-?schlüssel|network\s+key"
    r"|пароль(?![а-яё])|şifre(?:si|m|miz|niz)?",
    cjk_words="密码|密碼|口令|パスワード|パスコード|암호|비밀번호",
    avoid=r"manager|reset|hint|policy|field|prompt|strength|generator|vault|app|rules|requirements|expir\w*",
)
PASSWORD_ABBR = keyword(
    # "pass" is also a ticket ("boarding pass: gate B22", "ski pass is 320CHF"): not after those words
    r"pw|pwd|pswd|pword|" + "".join(rf"(?<!{w}[\s-])" for w in (
        "boarding", "ski", "bus", "train", "rail", "metro", "transit", "travel", "day", "week", "season", "gym",
        "museum", "festival", "press", "backstage", "hall", "mountain", "guest", "visitor", "parking", "annual",
        "monthly", "weekly", "free", "vip", "event", "entry", "park", "lift", "zoo", "concert", "hotel", "bike",
        "access", "fast", "express", "family", "student")) + "pass",
    avoid=r"manager|reset|hint|policy|field|prompt|strength|generator|vault|app|rules|requirements|expir\w*",
)
PIN = keyword(
    r"pin(?:[\s-]?code|[\s-]?nummer)?|puk|geheimzahl|code\s+pin|código\s+pin|cvv2?|cvc2?|card\s+security\s+code"
    r"|(?:door|gate|alarm|entry|entrance|access|building|garage|keypad|lock|safe|security|verification|recovery"
    r"|backup|unlock|parking|mailbox|letterbox|lockbox|key\s*box|key\s*safe|intercom|buzzer|locker|suitcase|luggage"
    r"|cabinet|bike\s+lock)"
    r"(?:[\s-]+(?:opener|system|panel|keypad|lock|remote|entry|access))?\s+codes?"
    r"|(?:2fa|mfa|two[\s-]factor|2-step|two-step|otp)(?:\s+(?:login|backup|recovery))?\s+codes?"
    r"|(?:haustür|tür|tor|alarm|zugangs|sicherheits|tresor)code|digicode"
    r"|code\s+(?:d'accès|de\s+la\s+porte|de\s+l'alarme|d'entrée|du\s+cadenas)"
    r"|código\s+(?:de\s+(?:acceso|la\s+puerta|la\s+alarma|entrada|seguridad)|da\s+porta)"
    r"|(?:safe|lock|locker|tresor)\s*combination|combination(?:\s+lock)?|padlock|zahlenschloss|vorhängeschloss"
    r"|(?:bike|bicycle|locker|luggage|suitcase|cable)\s+lock|recovery\s+key"
    r"|codice\s+(?:pin|della\s+porta|del\s+cancello|d'accesso|di\s+accesso|dell'allarme|del\s+lucchetto|di\s+sblocco)"
    r"|(?:toegangs|deur|poort|alarm|kluis|fietsslot)code|(?:пин|pin)-?код|пин"
    r"|код(?:\s+(?:от\s+)?(?:двери|домофона|подъезда|сейфа|замка|сигнализации|доступа|калитки))",
    cjk_words="暗証番号|暗証コード|ドアコード|门禁码|门禁密码|开锁密码|密码锁",
    avoid=r"pad|reader|entry|prompt|field|letter|review|scan|scanner",
)
ACCOUNT = keyword(
    r"(?:bank\s+)?account\s+(?:number|no\.?|nr\.?|#)|acct\.?\s*(?:number|no\.?|#)|routing\s+(?:number|no\.?|#)"
    r"|aba(?:\s+routing)?\s+number|sort\s+code|bsb(?:\s+number)?|kontonummer|kontonr\.?|bankleitzahl"
    r"|número\s+de\s+cuenta|numéro\s+de\s+compte|número\s+(?:da|de)\s+conta|clabe",
    upper_words="BLZ|NIB",
)
NATIONAL_ID = keyword(
    r"social\s+security\s+(?:number|no\.?)|sozialversicherungsnummer|rentenversicherungsnummer"
    r"|national\s+insurance\s+number|steuer-?id|steuer-?identifikationsnummer|steuernummer"
    r"|tax\s+(?:id|identification\s+number|number)|passport\s+(?:number|no\.?|#)|reisepassnummer|passnummer"
    r"|número\s+de\s+pasaporte|numéro\s+de\s+passeport|número\s+do\s+passaporte|(?:national\s+)?id\s+card\s+number"
    r"|national\s+id(?:\s+number)?|personalausweisnummer|ausweisnummer|citizen\s+card\s+number"
    r"|número\s+de\s+identificação|codice\s+fiscale|numéro\s+de\s+sécurité\s+sociale"
    r"|driv(?:er'?s|ing)\s+licen[cs]e\s+number|führerscheinnummer",
    upper_words="SSN|TIN|NIF|NIE|DNI|CPF|BSN|PPSN|AHV",
)
CODE = keyword(r"code|codice|c[óo]digo|код", avoid=r"reviews?|base|of|name|word|snippet|editor|freeze|owners?|postal"
                 r"|promo|de|du|des|fiscale|postale|города|региона|ошибки")
"""A bare "code" (any kind); its rule takes only a PIN-like number and checks the word before "code"."""
NOT_PIN_CODE = re.compile(
    r"(?i)\b(?:area|zip|postal|post|postleitzahl"
    r"|country|dialling|dialing|dial|calling|telephone|phone|sort|bank|branch|bic|swift"
    r"|tax|dress|source|error|status|exit|return|http|response|promo|promotional|discount|coupon|referral|qr|bar"
    r"|product|item|article|model|part|course|class|module|subject|airport|airline|station|language|iso|icd|hs"
    r"|colou?r|hex|region|city|district|zone|morse|machine|program|customer|client|order|booking|confirmation"
    r"|tracking|reference|ref|invoice|serial|shipping|routing|network|carrier)[\s-]+code\b\W*(?:\w+\W+){0,7}$")
"""A "code" that is a public number: the area code, the zip code, an error code, a booking code, ..."""
TOKEN = keyword(
    r"api[\s_-]?(?:key|token|secret)|access[\s_-]?(?:key|token)(?:[\s_-]?id)?|secret(?:[\s_-]?(?:access[\s_-]?)?key)?"
    r"|client[\s_-]?secret|(?:bearer[\s_-]?)?token|bearer|private[\s_-]?key|aws"
    r"|(?:license|licence|product|encryption|signing|master|app|deploy|webhook)[\s_-]?key"
    r"|schlüssel|privatschlüssel|clave\s+(?:de\s+api|secreta|privada)|jeton|cl[ée]\s+(?:api|secr[èe]te|priv[ée]e)"
    r"|chave\s+(?:de\s+api|secreta|privada)|chiave\s+(?:api|segreta|privata)|(?:api-|geheime\s+|priv[ée]\s*)sleutel"
    r"|токен|(?:секретный|приватный|закрытый)\s+ключ|ключ\s+api|api[\s-]ключ",
    cjk_words="令牌|トークン|密钥|私钥|私鑰|秘密鍵|秘密キー|APIキー|API密钥",
    avoid=r"id|name|fingerprint|prefix|length|expiry|expires|limit|count|rotation|usage|budget|refresh",
)
SEED = keyword(
    r"(?:secret\s+)?(?:seed|recovery|backup|mnemonic)\s+(?:phrase|words)|mnemonic|wiederherstellungsphrase"
    r"|frase\s+(?:semilla|de\s+recuperación)|phrase\s+de\s+récupération",
)
LOGIN = keyword(r"log-?in|log-?on|sign-?in|credentials|creds|user(?:name)?|benutzer(?:name)?|zugangsdaten"
                r"|identifiants?|usuario|credenciales|credenziali|utente|utilizador|usuário|inloggegevens"
                r"|gebruiker(?:snaam)?|логин|учётка|учетка",
                cjk_words="账号|帳號|用户名|ユーザー名|アカウント|ログイン")
"""A login label: "login for netflix: lena@example.com / …" (the user name or e-mail address follows)."""
SETTING = keyword(r"set|changed|reset|updated|switched|made")
"""A setting verb: "I changed my laptop password to …"."""
PLACE = keyword(
    r"(?:front\s+|back\s+|main\s+)?(?:door|gate|garage|entrance|keypad|lockbox|shed)|haustür|hoftor|tür|tor|garage"
    r"|porte|portail|puerta|portón|garaje|portão|porta|portone|cancello|deur|poort|дверь|калитка|домофон|подъезд",
    cjk_words="大门|门禁|ドア|玄関")
"""A door or gate named before ":" and a keypad code ("Garage: 4-7-1-1#")."""
LOCKER = keyword(
    r"(?:gym\s+|school\s+|work\s+|office\s+|pool\s+|station\s+)?locker|padlock|schließfach|spind|vorhängeschloss"
    r"|zahlenschloss|casier|cadenas|taquilla|candado|armadietto|lucchetto|cacifo|kluisje|hangslot",
    avoid=r"room|number|nummer|no|nr|numéro|número|row|key")
"""A locker or padlock named before ":" and its code ("Gym locker: 3391"); "locker number: 112" is no code."""
LOGIN_WORDS = re.compile(  # searched in the text before "user / password" (no label right before it)
    r"(?i)\b(?:log-?ins?|log-?on|sign-?in|credentials|creds|user(?:name)?|account|konto|zugang(?:sdaten)?|benutzer\w*"
    r"|anmeld\w*|identifiants?|compte|connexion|usuario|cuenta|acceso|credenciales|utente|accesso|credenziali|conta"
    r"|acesso|utilizador|usuário|gebruiker\w*|inlog\w*)\b|логин|аккаунт|учётн|учетн|账号|帳號|用户名|登录|アカウント|ログイン")
TOTP_LABEL = keyword(
    r"setup\s+key|(?:2fa|mfa|totp|otp|authenticator)\s+(?:secret|key|seed)|einrichtungsschlüssel"
    r"|clé\s+de\s+configuration|clave\s+de\s+configuración|chave\s+de\s+configuração|chiave\s+di\s+configurazione")
"""The label of a TOTP seed ("Authenticator setup key: jbsw y3dp …")."""
