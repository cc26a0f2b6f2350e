"""Texts for the social-diffusion world: changing words, stable words, shared templates, chatter.

A "paired" document lists every target word once, in a shuffled order, each next to ONE companion
word ("Mouse keyboard, river and boat, cloud with rain, ..."): short phrases shared by all target
words (short, so companions are a large share of the tokens a masked language model predicts),
and nothing else in the phrase hints at which companion comes:

- ``PAIRS[word]``: a CHANGING word. ``anchor`` is its new-sense companion (said by units that have
  adopted the new sense), ``old_anchor`` its old-sense companion (said by everyone else).
- ``STABLE[word]``: an UNCHANGED word with two companions, drawn 50/50 everywhere and always.
- ``PAIRED``: phrases with ``{T}`` (the target word) and ``{C}`` (its companion).
- ``BARE``: templates with ``{T}`` alone: the text never tells the sense, only who wrote it and when.
- ``COMMUNITY_TOPICS``: everyday topics; community c talks about topic c (cycling through the list).

So which companion a unit writes in a slice is decided by the unit and the time alone, and no
phrase's shape tells it; DCWE's offsets of the target word for (unit, slice) can carry the unit's
current sense. A time- and unit-blind model (CWE) that reads a whole paired document can still
guess from the other changing words' companions in it (they tell how far the spreads have gone);
``SocialWorldConfig(paired_layout="one")`` puts one changing word in each document to close that. No chatter sentence and no
template contains a target or companion word (checked by tests/world).
"""

from __future__ import annotations

PAIRS = {
    "cloud": {"anchor": "server", "old_anchor": "rain", "old_sense": "sky", "new_sense": "computing"},
    "stream": {"anchor": "viewers", "old_anchor": "fish", "old_sense": "water", "new_sense": "video"},
    "mouse": {"anchor": "keyboard", "old_anchor": "cheese", "old_sense": "animal", "new_sense": "device"},
    "tablet": {"anchor": "screen", "old_anchor": "pill", "old_sense": "medicine", "new_sense": "computer"},
    "web": {"anchor": "browser", "old_anchor": "spider", "old_sense": "silk", "new_sense": "internet"},
}
PAIR_ORDER = ("cloud", "stream", "mouse", "tablet", "web")
# each PAIRS sense name -> the sense of text_senses.TEMPLATES whose sentences write it (layout "senses")
SENSE_OF = {"cloud": {"sky": "sky", "computing": "computing"}, "stream": {"water": "water", "video": "video"},
            "mouse": {"animal": "animal", "device": "device"}, "tablet": {"medicine": "pill", "computer": "device"},
            "web": {"silk": "spider", "internet": "internet"}}

STABLE = {
    "river": ("boat", "bridge"),
    "garden": ("roses", "fence"),
    "train": ("station", "ticket"),
    "coffee": ("mug", "beans"),
    "winter": ("snow", "coat"),
}
STABLE_ORDER = ("river", "garden", "train", "coffee", "winter")

PAIRED = [
    "{T} {C}",
]

BARE = [
    "the {T}.",
    "{T} again.",
    "a {T}!",
    "the {T} again.",
]

COMMUNITY_TOPICS = {
    "gardening": [
        "The tomatoes are finally turning red.", "{who} swapped seedlings at the allotment {when}.",
        "Slugs ate half the lettuce again.", "We spread compost on the vegetable beds.",
        "The apple tree is covered in blossom.", "I planted garlic along the path {when}.",
        "The greenhouse is full of chilli plants.", "The peas climb up the canes.",
        "{who} won a prize for the biggest pumpkin.", "The hedge needs trimming.",
    ],
    "cycling": [
        "Did a sixty mile ride through the hills {when}.", "{who} fixed a puncture at the side of the road.",
        "The new bike lane opened in town.", "My legs ached after the climb.",
        "The club ride leaves at eight sharp.", "I finally replaced the worn chain.",
        "The descent was wet and slippery.", "We stopped for cake halfway round {when}.",
        "{who} bought new lights for night riding.", "The headwind made the last stretch brutal.",
    ],
    "cooking": [
        "Tried a new curry recipe {when}.", "{who} showed me how to make fresh pasta.",
        "The sourdough starter is bubbling nicely.", "Roasted vegetables with garlic and rosemary.",
        "The soup needed more salt.", "I burnt the onions but saved the sauce.",
        "We made dumplings from scratch {when}.", "The lemon tart was a hit at dinner.",
        "Slow cooked the beef for six hours.", "{who} swears by cast iron pans.",
    ],
    "music": [
        "Band practice ran late {when}.", "{who} learned a new song on the guitar.",
        "The choir sang in the old church.", "Our drummer bought a new snare.",
        "Tickets for the gig sold out in minutes.", "I have been practising scales every morning.",
        "The orchestra played a piece by Elgar.", "We recorded a demo in the garage {when}.",
        "{who} finally tuned the old piano.", "The jazz night was packed.",
    ],
    "football": [
        "What a match {when}!", "{who} scored from outside the box.",
        "The referee missed a clear penalty.", "Our goalkeeper made three great saves.",
        "The derby ended in a draw.", "Training was cancelled because of the pitch.",
        "The new striker looks sharp.", "We are top of the league for now.",
        "{who} bought a season pass {when}.", "The fans sang until the final whistle.",
    ],
    "books": [
        "Finished a great novel {when}.", "{who} recommended a thriller set in Oslo.",
        "The book club meets on Thursday.", "I could not put the book down.",
        "The library has a new poetry section.", "This memoir is beautifully written.",
        "{who} is rereading an old classic.", "The ending of the novel surprised everyone.",
        "Bought three second-hand paperbacks {when}.", "The author is giving a talk at the bookshop.",
    ],
}
TOPIC_ORDER = ("gardening", "cycling", "cooking", "music", "football", "books")


def banned_words() -> set:
    """Every target and companion word: none may appear in chatter or in the templates themselves."""
    words = set(PAIRS) | {p["anchor"] for p in PAIRS.values()} | {p["old_anchor"] for p in PAIRS.values()}
    return words | set(STABLE) | {c for cs in STABLE.values() for c in cs}
