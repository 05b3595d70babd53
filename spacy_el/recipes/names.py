"""Which gold mentions read as names, for alias tables counted from coreference annotation.

GUM annotates every mention, pronouns and common-noun phrases included, and every mention of a linked
cluster carries the link. ``linked_mentions(names_only=True)`` keeps the mentions with an upper-case letter,
which lets in pronouns and phrases capitalised only because they start a sentence ("He", "I", "The city"):
as aliases they give "He" a prior over every person GUM train calls so. :func:`is_name` leaves them out, and
:func:`is_pronoun` tells the aliases that are pronouns, whatever their source (the title rule makes "He" the
surname of "Zheng He").
"""
#: Pronouns, determiners and quantifiers: capitalised at a sentence start, they do not make a name.
FUNCTION_WORDS = frozenset(
    "a an the this that these those i me my mine myself we us our ours ourselves you your yours yourself "
    "yourselves he him his himself she her hers herself it its itself they them their theirs themselves who whom "
    "whose which what one ones someone something everyone everybody everything anyone anything nobody nothing "
    "each every all both some any another other such".split()
)


def is_name(text: str) -> bool:
    """Whether a mention reads as a name: it has an upper-case letter outside a leading function word that is
    capitalised only as a sentence start. "He", "I", "Her" and "The city" are not names; "The Who", "US",
    "IT" and "One Direction" are."""
    words = text.split()
    if words and words[0].lower() in FUNCTION_WORDS and words[0] == words[0].capitalize():
        words = words[1:]
    return any(c.isupper() for word in words for c in word)


def is_pronoun(text: str) -> bool:
    """Whether an alias is a lone function word not written in capitals: "He", "she", "I" and "It" are;
    "US", "IT" and "WHO" (acronyms) are not."""
    return text.lower() in FUNCTION_WORDS and text in (text.lower(), text.capitalize())


__all__ = ["FUNCTION_WORDS", "is_name", "is_pronoun"]
