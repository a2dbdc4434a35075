"""Conversations (seed 002) on a real store, the real model and a real local OpenAI-protocol server: recall in
every reply, sensitive memories only when asked, working memory, compaction past 50 messages, model failures."""

from __future__ import annotations

from fake_llm import Reply

from twin.chat import ChatReply, Conversation, offline_reply
from twin.llm.provider import provider_for


def remember(store, recall, *contents: str) -> list[int]:
    ids = [store.insert_memory("owner", "fact", c, "muse", 0.5) for c in contents]
    recall.embed()
    recall.reader._refreshed_at = float("-inf")  # see the new vectors at once
    return ids


def say(conversation: Conversation, text: str, update_id: int) -> ChatReply:
    row_id, state = conversation.receive(text, update_id)
    assert state == "received"
    reply = conversation.reply_to(text)
    conversation.answered(row_id, reply)
    return reply


def test_every_reply_recalls_and_sensitive_memories_need_asking(twin_env, store, recall):
    ana, pin = remember(store, recall, "Owner's sister Ana lives in Porto.", "Owner's bank card PIN is 4321.")
    store.conn.execute("UPDATE memories SET sensitivity = 'sensitive' WHERE id = ?", (pin,))
    chat = Conversation(store, "owner", "42", twin_env, recall, None)
    reply = say(chat, "Where does my sister live these days?", 1)
    assert "Owner's sister Ana lives in Porto." in reply.text and reply.shown == [ana]
    assert "4321" not in say(chat, "What do I know about my bank card?", 2).text
    asked = say(chat, "What is my bank card PIN?", 3)
    assert "Owner's bank card PIN is 4321." in asked.text and pin in asked.shown
    assert chat.last_shown() == asked.shown
    assert say(chat, "Who won the 1954 world cup?", 4).text == "I don't remember anything about that yet."


def test_a_chat_bound_to_a_project_recalls_from_the_project_alone(twin_env, store, recall):
    """A family group bound to a project: its replies quote the project's memories, never the owner's own (read by
    the group's other members), by words or by meaning; the owner's private chat still recalls the owner's."""
    from twin.namespaces import project_namespace

    household = project_namespace("01JB2C3D4E5F6G7H8J9K0M1N2P")
    boiler = store.insert_memory("owner", "fact", "The boiler is serviced every May by Hendrik Plumbing.", "muse",
                                 0.5, namespace=household)
    private = store.insert_memory("owner", "fact", "Owner's boiler-room safe code hides in the May diary.", "muse",
                                  0.5)
    recall.embed()
    recall.reader._refreshed_at = float("-inf")
    group = Conversation(store, "owner", "-100", twin_env, recall, None, source="telegram:-100", namespace=household)
    reply = say(group, "When is the boiler serviced in May?", 1)
    assert reply.shown == [boiler] and "safe code" not in reply.text
    own = Conversation(store, "owner", "42", twin_env, recall, None)
    assert say(own, "Where does the boiler-room safe code hide in May?", 2).shown == [private]


def test_the_same_update_is_handled_once(twin_env, store, recall):
    chat = Conversation(store, "owner", "42", twin_env, recall, None)
    row_id, _ = chat.receive("I like figs.", 7)
    chat.answered(row_id, ChatReply("Noted."))
    assert chat.receive("I like figs.", 7) == (row_id, "answered")
    assert [role for role, _ in chat.working_memory()] == ["owner", "twin"]


def test_model_reply_gets_memories_as_quoted_data_and_the_working_memory(provider_env, store, recall, fake_llm):
    remember(store, recall, "Owner's sister Ana lives in Porto.")
    provider = provider_for(provider_env, store)
    chat = Conversation(store, "owner", "42", provider_env, recall, provider)
    fake_llm.script(Reply("Nice!"), Reply("Ana lives in Porto, you told me."))
    say(chat, "I bought a bike.", 1)
    reply = say(chat, "Where does my sister live?", 2)
    assert reply.by_model and reply.text == "Ana lives in Porto, you told me."
    messages = fake_llm.chat_requests()[1]["messages"]
    assert "Things I remember about you:\n<<<MEMORIES\n- Owner's sister Ana lives in Porto.\nMEMORIES>>>" in \
        messages[0]["content"]
    assert [(m["role"], m["content"]) for m in messages[1:]] == [
        ("user", "I bought a bike."), ("assistant", "Nice!"), ("user", "Where does my sister live?")]
    provider.close()


def test_a_failing_model_still_gets_an_answer_from_recall(provider_env, store, recall, fake_llm):
    remember(store, recall, "Owner's sister Ana lives in Porto.")
    provider = provider_for(provider_env, store)
    chat = Conversation(store, "owner", "42", provider_env, recall, provider)
    fake_llm.script(Reply(status=500), Reply(status=500))
    reply = say(chat, "Where does my sister live?", 1)
    assert not reply.by_model and "Owner's sister Ana lives in Porto." in reply.text
    provider.close()


def fill(chat: Conversation, n: int) -> None:
    for i in range(1, n + 1):
        row_id, _ = chat.receive(f"I planted tomato number {i} in the garden.", i)
        chat.answered(row_id, ChatReply("Noted."))


def test_compaction_past_fifty_messages_keeps_the_last_ten(twin_env, store):
    chat = Conversation(store, "owner", "42", twin_env, None, None)
    fill(chat, 25)  # 50 stored messages (owner + twin): not yet
    assert not chat.compact_if_due() and chat.summary() == ""
    chat.receive("I planted the last tomato.", 26)  # the 51st
    assert chat.compact_if_due()
    summary = chat.summary()
    assert "Owner planted tomato number 1 in the garden." in summary and "last tomato" not in summary
    ids = [r[0] for r in store.conn.execute("SELECT id FROM chat_messages WHERE chat_id = '42' ORDER BY id")]
    assert len(ids) == 51  # the transcript stays
    assert store.conn.execute("SELECT summarised_up_to FROM chat_sessions").fetchone()[0] == ids[-11]
    assert not chat.compact_if_due()  # 10 left unsummarised


def test_compaction_with_a_model_summary(provider_env, store, fake_llm):
    provider = provider_for(provider_env, store)
    chat = Conversation(store, "owner", "42", provider_env, None, provider)
    fill(chat, 26)
    fake_llm.script(Reply("Owner is planting tomatoes, 20 so far."))
    assert chat.compact_if_due() and chat.summary() == "Owner is planting tomatoes, 20 so far."
    request = fake_llm.chat_requests()[0]["messages"][1]["content"]
    assert "<<<CHAT\nOwner: I planted tomato number 1 in the garden." in request
    provider.close()


def test_offline_reply_shapes():
    assert offline_reply("I love figs", []) == "Noted, I'll remember that."
    assert offline_reply("Where are my keys", []) == "I don't remember anything about that yet."
    assert offline_reply("what do I love?", []) == "I don't remember anything about that yet."
