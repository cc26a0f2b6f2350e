"""Template grammar for the timelines' posts: mood (valence x intensity), topics, cues, fillers.

A post is assembled from parts, each optional except the feeling sentence:
    [opener] [cue] [event about a topic] [feeling at an intensity] [intensity extra] [closer]
Valence is "pos" or "neg"; intensity runs 1 (mild) .. 4 (extreme). The wording of each level is
clearly graded so an encoder can read both the direction and the strength of a mood; whether a
post is a switch or an escalation then depends on the preceding posts (and on the time gap).
No wording depends on the gap before a post, so the text carries no timing information.
"""

from __future__ import annotations

import numpy as np

LEVELS = (1, 2, 3, 4)

# Predicate phrases that complete "I feel ___" / "I'm ___", by valence and intensity.
FEELINGS = {
    ("pos", 1): ["okay", "alright", "fine", "a little better", "mildly hopeful",
                 "somewhat calm", "a bit more relaxed", "cautiously optimistic"],
    ("pos", 2): ["good", "happy", "pretty cheerful", "genuinely relaxed", "really pleased",
                 "glad", "content", "quite positive"],
    ("pos", 3): ["great", "really happy", "thrilled", "so proud", "full of energy", "delighted",
                 "excited", "wonderful"],
    ("pos", 4): ["absolutely fantastic", "on top of the world", "over the moon", "ecstatic",
                 "happier than I have been in years", "incredibly grateful and excited",
                 "bursting with joy", "happier than ever"],
    ("neg", 1): ["a bit off", "slightly down", "a little tired", "kind of flat", "mildly annoyed",
                 "somewhat uneasy", "a bit restless", "not quite myself"],
    ("neg", 2): ["down", "stressed", "sad", "pretty frustrated", "really tired", "anxious",
                 "worried", "low"],
    ("neg", 3): ["awful", "miserable", "really upset", "exhausted and angry", "so anxious",
                 "heartbroken", "terrible", "overwhelmed"],
    ("neg", 4): ["completely broken", "absolutely devastated", "at the end of my rope",
                 "worse than I have ever felt", "furious and hopeless", "totally crushed",
                 "utterly hopeless", "lower than I have ever been"],
}

FEELING_TEMPLATES = [
    "I feel {f}.", "Feeling {f} today.", "Honestly, I'm {f}.", "Right now I'm {f}.",
    "When it comes to {obj}, I'm {f}.", "Can't lie, I feel {f}.", "Today I feel {f}.",
    "Thinking about {obj}, I feel {f}.", "All in all I'm {f}.", "Overall I feel {f}.",
    "Just feeling {f} at the moment.", "As for {obj}, honestly I feel {f}.",
]

# Short extra sentences that reinforce a level (used for the mild and the strong ends).
EXTRAS = {
    ("pos", 1): ["Not bad, not great.", "Nothing special, but fine.", "Could be worse.",
                 "A small step in the right direction."],
    ("pos", 2): ["It was a nice day overall.", "Things are going well.", "I'm smiling more.",
                 "Good vibes today."],
    ("pos", 3): ["Best day in a long while!", "Everything is going my way!", "I can't stop smiling!",
                 "What a brilliant feeling!"],
    ("pos", 4): ["This is the best day of my life!", "I could not be any happier!",
                 "Everything is perfect right now!", "I want to shout it from the rooftops!"],
    ("neg", 1): ["Just one of those days.", "A bit meh.", "Nothing serious, just off.",
                 "I'll probably shake it off."],
    ("neg", 2): ["It's weighing on me.", "Not a good day.", "I wish it would just stop.",
                 "Finding it hard to focus."],
    ("neg", 3): ["I really can't deal with this.", "Everything feels heavy.",
                 "I cried on the way home.", "This is so hard."],
    ("neg", 4): ["I can't take any more of this.", "Everything is falling apart.",
                 "This is the worst I have ever felt.", "I don't know how to get through tomorrow."],
}

# Topics: an object phrase and events by valence. Each timeline talks about 2-3 topics.
TOPICS = {
    "work": {
        "obj": ["work", "my job", "the office", "this project"],
        "pos": ["My manager liked the report I sent.", "The project finally shipped.",
                "I got some kind feedback from my team.", "The meeting went really smoothly.",
                "We hit the deadline with time to spare.", "A client thanked me in person."],
        "neg": ["My manager rejected the report I sent.", "The project slipped again.",
                "Work keeps piling up on my desk.", "The meeting was a complete mess.",
                "We missed the deadline.", "A client complained about my work."],
    },
    "exams": {
        "obj": ["my exams", "uni", "my thesis", "the coursework"],
        "pos": ["I passed the statistics exam.", "My tutor praised my essay.",
                "The revision is finally paying off.", "I handed in my thesis chapter on time.",
                "The exam was easier than I expected.", "I got a good grade on the lab report."],
        "neg": ["I failed the statistics exam.", "My tutor tore my essay apart.",
                "The revision is going nowhere.", "I missed the thesis deadline.",
                "The exam was much harder than I expected.", "I got a poor grade on the lab report."],
    },
    "family": {
        "obj": ["my family", "my parents", "things at home", "my sister"],
        "pos": ["My parents came over for dinner and we laughed a lot.",
                "My sister called just to say hi.", "We finally sorted out the argument at home.",
                "My dad is out of hospital.", "Had a lovely walk with my mum.",
                "My brother and I are talking again."],
        "neg": ["My parents and I had another argument.", "My sister stopped answering my calls.",
                "Things at home are tense again.", "My dad is back in hospital.",
                "My mum is not well.", "My brother and I fell out again."],
    },
    "health": {
        "obj": ["my health", "my sleep", "my recovery", "my body"],
        "pos": ["I slept through the whole night.", "The doctor said the scan looks clear.",
                "My knee is finally healing.", "I went for a run this morning.",
                "The new medication seems to help.", "I have more energy than last week."],
        "neg": ["I barely slept again.", "The doctor wants to run more tests.",
                "My knee is hurting again.", "I had to skip my run.",
                "The new medication makes me dizzy.", "I have no energy at all."],
    },
    "friends": {
        "obj": ["my friends", "my social life", "the group chat", "my best friend"],
        "pos": ["My friends threw me a surprise party.", "I met up with an old friend.",
                "The group chat has been so supportive.", "My best friend visited for the weekend.",
                "We went bowling and I actually won.", "Someone I admire invited me to lunch."],
        "neg": ["My friends cancelled on me again.", "An old friend ignored my message.",
                "The group chat has gone quiet.", "My best friend is moving away.",
                "Nobody showed up to the film night.", "I felt left out at the party."],
    },
    "home": {
        "obj": ["the new flat", "my landlord", "the move", "my neighbours"],
        "pos": ["We got the keys to the new flat.", "The landlord fixed the heating.",
                "The move went without a hitch.", "My neighbours brought round a cake.",
                "The flat finally feels like home.", "The rent is going down next month."],
        "neg": ["The new flat fell through.", "The landlord still hasn't fixed the heating.",
                "The move has been a nightmare.", "My neighbours were loud all night.",
                "There is damp all over the bedroom wall.", "The rent is going up again."],
    },
    "money": {
        "obj": ["money", "my finances", "the bills", "my savings"],
        "pos": ["I paid off my credit card.", "I got a small pay rise.",
                "The refund finally came through.", "My savings are growing at last.",
                "I found a cheaper phone contract.", "I sold the old bike for a good price."],
        "neg": ["Another bill arrived that I can't pay.", "My hours were cut at work.",
                "The refund was refused.", "My savings are almost gone.",
                "The car needs an expensive repair.", "I lost my wallet on the bus."],
    },
    "job search": {
        "obj": ["the job search", "applications", "interviews", "my career"],
        "pos": ["I got invited to a second interview.", "A recruiter reached out to me.",
                "The interview went really well.", "I got the job offer!",
                "My portfolio got great comments.", "They want me to start next month."],
        "neg": ["Another rejection email this morning.", "Nobody replies to my applications.",
                "The interview went badly.", "They gave the job to someone else.",
                "My portfolio got harsh comments.", "Still no offers after three months."],
    },
    "pet": {
        "obj": ["my dog", "the cat", "our puppy", "the vet visits"],
        "pos": ["My dog is eating properly again.", "The cat finally let me pet her.",
                "Our puppy learned to sit.", "The vet says he is perfectly healthy.",
                "We adopted a rescue kitten.", "My dog did well at the training class."],
        "neg": ["My dog stopped eating.", "The cat went missing last night.",
                "Our puppy chewed through the sofa.", "The vet found a lump.",
                "The rescue said no to our application.", "My dog was limping all day."],
    },
    "sport": {
        "obj": ["training", "the team", "the season", "my running"],
        "pos": ["Our team won the match.", "I beat my personal best.",
                "The coach picked me for the final.", "Training felt easy today.",
                "We made it to the play-offs.", "I finished my first half marathon."],
        "neg": ["Our team lost the match.", "I was way off my personal best.",
                "The coach dropped me for the final.", "Training was brutal today.",
                "We got knocked out of the play-offs.", "I pulled a muscle at the half marathon."],
    },
}

OPENERS = ["Quick update.", "Checking in again.", "Here's my day so far.", "Another update.",
           "Okay, so.", "Hi all.", "Just a short one.", "Back again.", "Small update.",
           "Writing this on the bus."]
# openers that only fit a time of day (UTC hour ranges, inclusive start, exclusive end)
TIMED_OPENERS = [((5, 12), "Morning, everyone."), ((5, 11), "Good morning."),
                 ((17, 23), "Evening, all."), ((23, 24), "Late night post."),
                 ((0, 4), "Late night post."), ((0, 4), "Can't sleep.")]

CLOSERS = ["I guess.", "We'll see how it goes.", "Anyway.", "Thanks for reading.",
           "Let's see what tomorrow brings.", "That's all for now.", "More later.",
           "Thanks for listening.", "Just needed to say it somewhere.", "Talk soon."]

# Explicit discourse cues (used on a share `cue_rate` of switch/escalation posts). A switch cue
# depends on the NEW valence; an escalation cue on the valence that intensifies.
SWITCH_CUES = {
    "pos": ["Finally, some good news!", "What a turnaround.", "Out of nowhere, things are looking up.",
            "I didn't see this coming, but in a good way.", "Big change of mood today.",
            "For once, something went right.", "Wow, the tide has turned."],
    "neg": ["Well, that didn't last.", "Spoke too soon.", "And just like that, it all went wrong.",
            "Out of nowhere, everything changed.", "Such a sudden change of mood.",
            "The good streak is over.", "Wow, what a fall."],
}
ESCALATION_CUES = {
    "pos": ["And it keeps getting better!", "Even better than before.", "Things just keep improving.",
            "Another step up.", "It only gets better from here.", "Better and better."],
    "neg": ["And it keeps getting worse.", "Even worse than before.", "It's piling up.",
            "This is getting worse by the hour.", "One thing after another.", "Worse and worse."],
}
# Continuation cues for ordinary posts (so a "still" phrase alone is not a label giveaway).
SAME_CUES = ["Same as before, really.", "Nothing much has changed.", "Still the same.",
             "Pretty much where I was yesterday.", "No real change."]

# Neutral small talk (noise posts): no mood, label "O", latent mood unchanged.
SMALL_TALK = ["Had pasta for dinner.", "It's raining again here.", "Watching a documentary about whales.",
              "Does anyone know a good podcast?", "Reorganised my bookshelf this afternoon.",
              "The bus was ten minutes late.", "Trying a new recipe for soup tonight.",
              "Anyone else watching the football later?", "Bought a new plant for the kitchen.",
              "The library closes early on Fridays now.", "Need to remember to call the dentist.",
              "Found an old photo album in the attic.", "The shop ran out of oat milk.",
              "Reading a novel about a lighthouse keeper.", "My phone needs charging again."]


def _pick(rng: np.random.Generator, items: list) -> str:
    return items[int(rng.integers(len(items)))]


def opener(rng: np.random.Generator, hour: int) -> str:
    """An opening line that fits the hour of the post. It never mentions the gap before the post:
    the world's time-decidable switches must stay invisible in the text."""
    options = OPENERS + [o for (lo, hi), o in TIMED_OPENERS if lo <= hour < hi]
    return _pick(rng, options)


def write_post(rng: np.random.Generator, valence: str, level: int, topics: list,
               cue: str | None = None, same_cue: bool = False, hour: int = 12) -> str:
    """One post at (valence, level) about one of `topics`; `cue` is "switch"/"escalation"/None;
    `hour` (0-23) chooses a fitting opener."""
    topic = TOPICS[_pick(rng, topics)]
    parts: list[str] = []
    if rng.random() < 0.25:
        parts.append(opener(rng, hour))
    if cue == "switch":
        parts.append(_pick(rng, SWITCH_CUES[valence]))
    elif cue == "escalation":
        parts.append(_pick(rng, ESCALATION_CUES[valence]))
    elif same_cue:
        parts.append(_pick(rng, SAME_CUES))
    if rng.random() < 0.75:
        parts.append(_pick(rng, topic[valence]))
    template = _pick(rng, FEELING_TEMPLATES)
    parts.append(template.format(f=_pick(rng, FEELINGS[(valence, level)]), obj=_pick(rng, topic["obj"])))
    # every mood post ends its feeling with a reinforcing sentence of its level, so that the
    # strength of a mood is legible (escalations are +1 level steps: without it a MiniLM probe reads
    # the level right ~77% of the time, with it ~92%). The coin drawn here used to decide whether
    # the sentence appears; it now picks the sentence when the old rule said "no", so the world's
    # random stream (every timeline's labels, gaps and lengths) stays exactly as it was.
    extras = EXTRAS[(valence, level)]
    coin = rng.random()
    if coin < (0.6 if level in (1, 4) else 0.35):
        parts.append(_pick(rng, extras))
    else:
        parts.append(extras[int(coin * 1_000_003) % len(extras)])
    if rng.random() < 0.2:
        parts.append(_pick(rng, CLOSERS))
    return " ".join(parts)


def write_small_talk(rng: np.random.Generator) -> str:
    """A neutral post with no mood in it."""
    parts = [_pick(rng, SMALL_TALK)]
    if rng.random() < 0.4:
        parts.append(_pick(rng, [s for s in SMALL_TALK if s != parts[0]]))
    return " ".join(parts)
