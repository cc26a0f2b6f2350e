"""Texts for the social-diffusion world: the spreading word's old and new sense, and community chatter.

`PAIRS[word]` gives the anchor (a word tied to the NEW sense, present in every new-sense usage and
in no old-sense usage), the two sense names, and templates for each sense. Old-sense templates
are the change world's (text_senses.py). `COMMUNITY_TOPICS` are everyday topics; community c
talks about topic c (cycling through the list), which gives each community its own vocabulary.
No community sentence contains a PAIRS word or anchor (checked by tests/world).
"""

from __future__ import annotations

from .text_senses import TEMPLATES

PAIRS = {
    "cloud": {
        "anchor": "server", "old_sense": "sky", "new_sense": "computing",
        "old": TEMPLATES["cloud"]["sky"],
        "new": [
            "We moved the files from the old server to the cloud {when}.",
            "{who} says the cloud is cheaper than running our own server.",
            "The server in the cloud went down during the demo.",
            "Our team rents a cloud server by the hour.",
            "The backup server now lives in the cloud.",
            "I set up a cloud server for the club website.",
            "The cloud server crashed {when} and took the site with it.",
            "{who} shut down the office server and moved everything to the cloud.",
            "Each cloud server costs a few pennies an hour.",
            "The new server runs in the cloud, not in the basement.",
            "Logs from the cloud server filled the disk overnight.",
            "We pay for cloud storage instead of a second server.",
        ],
    },
    "stream": {
        "anchor": "viewers", "old_sense": "water", "new_sense": "video",
        "old": TEMPLATES["stream"]["water"],
        "new": [
            "The stream had over a thousand viewers {when}.",
            "{who} thanked the viewers at the end of the stream.",
            "Most viewers left the stream before the end.",
            "The stream lost half its viewers when the sound failed.",
            "The viewers asked questions in the stream chat.",
            "{who} runs a cooking stream for a few loyal viewers.",
            "The stream broke its record for viewers {when}.",
            "New viewers keep finding the stream through search.",
            "During the stream the viewers voted on the next game.",
            "The charity stream raised money from generous viewers.",
            "The stream started late and the viewers got restless.",
            "{who} reads comments from viewers during every stream.",
        ],
    },
    "mouse": {
        "anchor": "keyboard", "old_sense": "animal", "new_sense": "device",
        "old": TEMPLATES["mouse"]["animal"],
        "new": [
            "{who} bought a new keyboard and mouse {when}.",
            "The mouse and keyboard are both wireless now.",
            "Plug the keyboard in first, then the mouse.",
            "My wrist aches from the keyboard and the mouse.",
            "The office ordered a mouse and keyboard for every desk.",
            "The mouse works but the keyboard keeps lagging.",
            "{who} spilled tea over the keyboard and the mouse.",
            "A gaming keyboard and mouse came with the computer.",
            "The mouse sits to the right of the keyboard.",
            "I cleaned the keyboard and the mouse with a damp cloth {when}.",
            "The keyboard has a slot to store the mouse.",
            "The mouse battery died, so I used keyboard shortcuts.",
        ],
    },
}

COMMUNITY_TOPICS = {
    "gardening": [
        "The tomatoes are finally turning red.", "{who} swapped seedlings at the allotment {when}.",
        "Slugs ate half the lettuce again.", "The roses need pruning before winter.",
        "We spread compost on the vegetable beds.", "The apple tree is covered in blossom.",
        "I planted garlic along the fence {when}.", "The greenhouse is full of chilli plants.",
        "The beans are climbing up the canes.", "{who} won a prize for the biggest pumpkin.",
    ],
    "cycling": [
        "Did a sixty mile ride through the hills {when}.", "{who} fixed a puncture at the side of the road.",
        "The new bike lane opened in town.", "My legs ached after the climb.",
        "The club ride leaves at eight sharp.", "I finally replaced the worn chain.",
        "The descent was wet and slippery.", "We stopped for cake halfway round {when}.",
        "{who} bought new lights for winter riding.", "The headwind made the last stretch brutal.",
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
        "{who} bought a season ticket {when}.", "The fans sang until the final whistle.",
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
