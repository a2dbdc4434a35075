"""Who wrote what in one Telegram message: the owner's own words, and the text of others inside it (the `to_text`
part of the Telegram connector; STYLE.md 3). Pure: a python-telegram-bot `Message` in, a `Said` out.

The Bot API marks text by someone else in three ways (python-telegram-bot 22.x names): `forward_origin` (the
whole message is a forward: `MessageOriginUser`, `MessageOriginHiddenUser`, `MessageOriginChat`,
`MessageOriginChannel`), `reply_to_message` (the message the owner answered, with its own author or forward
origin) with `quote` (the part of it the owner quoted), and `external_reply` (a reply to a message of another
chat, with its `origin`; its text is in `quote`). A forward from the owner, and a reply to the owner's own
message, are the owner's words; a reply to the twin's own message adds nothing to learn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from telegram import (
    Message,
    MessageOrigin,
    MessageOriginChannel,
    MessageOriginChat,
    MessageOriginHiddenUser,
    MessageOriginUser,
    User,
)

from twin.chat import Voice, transcript_text
from twin.text.reported_speech import clean_speaker

_SURROGATES = re.compile(r"[\ud800-\udfff]")
UNKNOWN_SPEAKER = "someone"
"""The speaker of text whose author Telegram does not name (ours)."""


@dataclass(frozen=True)
class Said:
    """One message: `own` what the owner wrote ("" for a plain forward), `voices` the text of others in it,
    `forwarded` True when the whole message is someone else's (then it is never a command, whatever it says)."""

    own: str
    voices: tuple[Voice, ...] = field(default_factory=tuple)
    forwarded: bool = False

    @property
    def transcript(self) -> str:
        """The message as the transcript keeps it and the reply reads it (`twin.chat.transcript_text`)."""
        return transcript_text(self.own, self.voices)

    @property
    def is_command(self) -> bool:
        """True for the owner's own `/command` (a forwarded "/forget yes" is data)."""
        return not self.forwarded and self.own.startswith("/")


def _user_name(user: User) -> tuple[str, str]:
    name = clean_speaker(user.full_name) or UNKNOWN_SPEAKER
    handle = f"@{clean_speaker(user.username)}, " if user.username else ""
    return name, f"{name} ({handle}user {user.id})"


def speaker_of(origin: MessageOrigin) -> tuple[str, str, int | None]:
    """`(speaker, description, user id or None)` of a message origin: a user's full name ("Trudy Meyer",
    "Trudy Meyer (@trudy, user 777)"), a hidden user's name ("Trudy (hidden account)"), a chat's or channel's
    author signature or title ("Bob in “Daily News” (channel)"). Names are one line without control characters."""
    if isinstance(origin, MessageOriginUser):
        name, described = _user_name(origin.sender_user)
        return name, described, origin.sender_user.id
    if isinstance(origin, MessageOriginHiddenUser):
        name = clean_speaker(origin.sender_user_name) or UNKNOWN_SPEAKER
        return name, f"{name} (hidden account)", None
    if isinstance(origin, MessageOriginChat | MessageOriginChannel):
        chat = origin.sender_chat if isinstance(origin, MessageOriginChat) else origin.chat
        title = clean_speaker(chat.title or chat.full_name or "") or UNKNOWN_SPEAKER
        kind = "channel" if isinstance(origin, MessageOriginChannel) else "group"
        signed = clean_speaker(origin.author_signature or "")
        name = signed or title
        return name, (f"{signed} in “{title}” ({kind})" if signed else f"“{title}” ({kind})"), None
    return UNKNOWN_SPEAKER, UNKNOWN_SPEAKER, None


def _replied(message: Message, owners: set[int], bot_id: int) -> Voice | None:
    """The text of others the owner replied to or quoted, or None (a reply to the twin or to the owner)."""
    quoted = message.quote.text if message.quote is not None and message.quote.text else ""
    answered = message.reply_to_message
    if answered is not None:
        if answered.forward_origin is not None:
            speaker, described, user_id = speaker_of(answered.forward_origin)
        elif answered.from_user is not None:
            if answered.from_user.is_bot or answered.from_user.id == bot_id:
                return None
            speaker, described = _user_name(answered.from_user)
            user_id = answered.from_user.id
        else:
            return None
        text = quoted or answered.text or ""
    elif message.external_reply is not None and quoted:
        speaker, described, user_id = speaker_of(message.external_reply.origin)
        text = quoted
    else:
        return None
    if (user_id is not None and user_id in owners) or not text.strip():
        return None
    return Voice(speaker, text, f"quoted by Owner in a reply to {described}", how="replied")


def read_message(message: Message, owners: set[int], bot_id: int) -> Said:
    """What the owner said in `message` and what others said in it (see the module docstring). `owners` are the
    owner's user ids (a forward of their own message is their words), `bot_id` the twin's own user id (a reply
    to the twin's message adds nothing). Lone surrogates (which no UTF-8 store can hold) become U+FFFD."""
    said = _read(message, owners, bot_id)
    clean = [Voice(v.speaker, plain_text(v.text), v.origin, v.how) for v in said.voices]
    return Said(plain_text(said.own), tuple(clean), said.forwarded)


def plain_text(text: str | None) -> str:
    """`text` ("" for None) with lone surrogates replaced by U+FFFD."""
    return _SURROGATES.sub("\ufffd", text or "")


def _read(message: Message, owners: set[int], bot_id: int) -> Said:
    text = message.text or ""
    if message.forward_origin is not None:
        speaker, described, user_id = speaker_of(message.forward_origin)
        if user_id is not None and user_id in owners:
            return Said(text, forwarded=True)
        voice = Voice(speaker, text, f"forwarded by Owner from {described}", how="forwarded")
        return Said("", (voice,) if text.strip() else (), forwarded=True)
    replied = _replied(message, owners, bot_id)
    return Said(text, (replied,) if replied is not None else ())
