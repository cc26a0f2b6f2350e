"""Cue sentences for the semantic-change world: a neutral frame, the word, and one sense cue.

A cue sentence ("We talked about the cell and the charger for a while.") names its word's sense
through a single cue word and nothing else: the frames are the probes' vague wording. Masking the
cue leaves the word and the period as the only evidence for it, so an MLM post-trained with time
can learn which sense a word has in each period (the planted shares), and a time-blind one can
only learn the mixture. `CUES[word][sense]` lists single-token cue words; none is a word of the
change world, so every cue sentence holds its word exactly once.
"""

from __future__ import annotations

CUES = {
    "cell": {"biology": ["microscope", "nucleus", "membrane", "tissue"],
             "phone": ["battery", "signal", "phone", "calls"]},
    "mouse": {"animal": ["cheese", "cat", "tail", "trap"],
              "device": ["keyboard", "laptop", "click", "computer"]},
    "tweet": {"bird": ["sparrow", "nest", "robin", "feathers"],
              "post": ["followers", "twitter", "likes", "message"]},
    "troll": {"folklore": ["goat", "fairy", "cave", "giant"],
              "internet": ["forum", "comments", "online", "account"]},
    "stream": {"water": ["fish", "rocks", "pebbles", "trout"],
               "video": ["viewers", "broadcast", "chat", "channel"]},
    "cloud": {"sky": ["rain", "storm", "thunder", "sunset"],
              "computing": ["server", "storage", "data", "backup"]},
    "viral": {"disease": ["infection", "fever", "virus", "vaccine"],
              "internet": ["clip", "video", "post", "likes"]},
    "spam": {"meat": ["tin", "sandwich", "pork", "breakfast"],
             "junk mail": ["email", "filter", "messages", "junk"]},
    "tablet": {"pill": ["dose", "medicine", "pharmacy", "prescription"],
               "device": ["screen", "apps", "games", "battery"]},
    "web": {"spider": ["spider", "silk", "insects", "dew"],
            "internet": ["browser", "online", "links", "site"]},
    "tape": {"cassette": ["recorder", "songs", "music", "stereo"],
             "adhesive": ["scissors", "glue", "parcel", "cardboard"]},
    "film": {"photographic": ["camera", "exposure", "photos", "lens"],
             "movie": ["cinema", "actors", "director", "premiere"]},
    "letter": {"postal": ["envelope", "stamp", "mail", "post"],
               "alphabet": ["vowel", "font", "spelling", "alphabet"]},
    "table": {"furniture": ["wood", "legs", "drawer", "dinner"]},
    "river": {"water": ["bank", "boats", "bridge", "current"]},
    "bread": {"food": ["butter", "oven", "flour", "toast"]},
    "window": {"building": ["glass", "curtains", "view", "frame"]},
    "chair": {"furniture": ["cushion", "desk", "seat", "back"]},
    "garden": {"outdoors": ["roses", "soil", "hedge", "flowers"]},
}

CUE_NOUN = [
    "{who} mentioned the {w} and the {cue} again {when}.",
    "Nobody said much about the {w} or the {cue}.",
    "I keep thinking about that {w} and the {cue}.",
    "The {w} and the {cue} came up in conversation {when}.",
    "There was something odd about the {w} and the {cue}.",
    "We talked about the {w} and the {cue} for a while.",
]
CUE_ADJ = [
    "{who} said the {cue} was {w} {when}.",
    "Nobody knew whether the {cue} was {w}.",
    "Apparently the whole {cue} thing was {w}.",
    "Someone called the {cue} {w} {when}.",
]


def cue_templates(word: str, adjective: bool) -> list[str]:
    """Cue frames for `word` with its {cue} slot left open."""
    return [t.replace("{w}", word) for t in (CUE_ADJ if adjective else CUE_NOUN)]
