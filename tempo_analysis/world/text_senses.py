"""Natural English sentences per word sense, for the two-period (semantic change) corpus.

Every template holds its word exactly once, as the exact lowercase form (so whole-word matching
finds one usage per sentence), and no other word of the change world. Slots: {who} a person,
{when} a time phrase. `TARGETS` lists the changing words with their planted sense shares
(share of the *changing* sense in the old and the new period, at change_strength 1), `CONTROLS`
the stable single-sense words. The rest of the words live in text_senses_more.py.
"""

from __future__ import annotations

from .text_senses_more import MORE_TEMPLATES, VAGUE_ADJ, VAGUE_NOUN

WHO = ["my sister", "the teacher", "our neighbour", "a colleague", "my uncle", "the student",
       "my friend", "the nurse", "her brother", "the manager", "an old man", "my cousin"]
WHEN = ["yesterday", "this morning", "last week", "on Sunday", "after lunch", "last night",
        "in the spring", "on Friday", "on the way home", "at the weekend"]

GAIN_TEMPLATES = {
    "cell": {
        "biology": [
            "Under the microscope, {who} could see the cell divide in two.",
            "The nucleus sits near the centre of the cell.",
            "Each cell in the leaf contains tiny green chloroplasts.",
            "A single cell can carry the whole genetic code.",
            "The biology class stained the cell so the membrane would show up.",
            "Blood carries oxygen to every cell in the body.",
            "{who} drew a diagram of a plant cell for homework.",
            "The damaged cell was slowly repaired by the immune system.",
            "A nerve cell sends signals along its long thin fibre.",
            "The sample {when} showed one cell with an unusual shape.",
            "Cancer starts when a cell begins to grow out of control.",
            "The egg cell was fertilised in the laboratory dish.",
        ],
        "phone": [
            "{who} left the cell on the kitchen counter and missed three calls.",
            "Call me on my cell if the train is late.",
            "{who} texted me {when} from a cell with a cracked screen.",
            "My cell battery died halfway through the call.",
            "She gave the courier her cell number.",
            "I couldn't get any cell signal in the mountains.",
            "He kept checking his cell during the meeting.",
            "The cell rang just as {who} sat down to eat.",
            "Please switch off your cell before the concert starts.",
            "My cell plan includes unlimited texts and calls.",
            "{who} dropped the cell in a puddle and it stopped working.",
            "The cell was charging next to the bed all night.",
        ],
    },
    "mouse": {
        "animal": [
            "A mouse ran across the kitchen floor {when}.",
            "The cat caught a mouse in the barn.",
            "{who} found a tiny mouse nesting in the shed.",
            "The field mouse gathered seeds for the winter.",
            "A mouse had nibbled through the bag of oats.",
            "The owl swooped down on a mouse in the grass.",
            "We heard a mouse scratching behind the wall.",
            "The children read a story about a brave little mouse.",
            "A grey mouse hid under the stove.",
            "The trap by the pantry finally caught the mouse.",
            "The snake swallowed the mouse whole.",
            "{who} spotted a mouse darting into a hole in the skirting board.",
        ],
        "device": [
            "Click the left mouse button to open the file.",
            "{who} bought a wireless mouse for the laptop.",
            "The mouse stopped working when the battery ran out.",
            "Move the mouse over the icon to see a preview.",
            "My wrist hurts from using the mouse all day.",
            "Double-click with the mouse to select the word.",
            "The gaming mouse has extra buttons on the side.",
            "Plug the mouse into a free USB port.",
            "The cursor froze even though I kept moving the mouse.",
            "{who} prefers a trackpad to a mouse.",
            "Drag the mouse {when} to highlight the text.",
            "The mouse pad on my desk is worn out.",
        ],
    },
    "tweet": {
        "bird": [
            "The tweet of a small bird woke {who} at dawn.",
            "We heard a single tweet from the hedge {when}.",
            "Each tweet of the robin sounded like a tiny bell.",
            "The sparrow gave a sharp tweet and flew off.",
            "A faint tweet came from the nest above the door.",
            "The canary's cheerful tweet filled the room.",
            "{who} tried to copy the tweet of the blackbird.",
            "A soft tweet echoed through the forest.",
            "The chick answered its mother with a weak tweet.",
            "The finch let out one last tweet before dusk.",
            "Over the noise of the wind came a tiny tweet.",
            "The tweet of the wren is surprisingly loud for such a small bird.",
        ],
        "post": [
            "The minister deleted the tweet after an hour.",
            "{who} posted a tweet about the election results.",
            "Her tweet was shared thousands of times overnight.",
            "The company apologised in a tweet {when}.",
            "He quoted my tweet with a rude comment.",
            "A single tweet from the singer sold out the concert.",
            "The journalist pinned the tweet to the top of her profile.",
            "{who} replied to the tweet with a photo of the queue.",
            "That tweet got more likes than anything I have ever written.",
            "The footballer's tweet about the referee caused an uproar.",
            "The tweet included a link to the new policy.",
            "Screenshots of the tweet spread across every platform.",
        ],
    },
    "troll": {
        "folklore": [
            "In the old tale, a troll lived under the bridge.",
            "The troll guarded the mountain pass and demanded gold.",
            "{who} read the children a story about a hungry troll.",
            "The stone troll turned to rock when the sun rose.",
            "A troll lurked in the dark woods beyond the village.",
            "The troll roared and the goats ran across the bridge.",
            "Legends say a troll hid treasure in the cave.",
            "The giant troll could not cross running water.",
            "In the play, {who} wore a green mask to look like a troll.",
            "The troll in the fairy tale was slow but very strong.",
            "Villagers left gifts at the hill where the troll slept.",
            "The painting showed a troll sitting on a mossy boulder.",
        ],
        "internet": [
            "Don't feed the troll in the comments section.",
            "A troll kept posting insults under every article.",
            "{who} blocked the troll after the third abusive message.",
            "The forum banned a troll who kept starting fights.",
            "That account is clearly a troll trying to provoke people.",
            "The moderators removed the troll from the chat {when}.",
            "An anonymous troll flooded her profile with nasty replies.",
            "Ignore the troll and keep the discussion civil.",
            "The journalist was targeted by a troll for months.",
            "A paid troll spread false stories before the vote.",
            "The online troll finally deleted his account.",
            "Every thread about politics attracts at least one troll.",
        ],
    },
    "stream": {
        "water": [
            "A clear stream ran past the cottage.",
            "{who} cooled their feet in the mountain stream.",
            "Trout swam in the cold stream.",
            "We followed the stream down to the valley {when}.",
            "The stream was swollen after days of rain.",
            "Children built a dam across the little stream.",
            "A narrow stream trickled over the mossy stones.",
            "The deer stopped to drink from the stream.",
            "The path crossed the stream on a wooden footbridge.",
            "In summer the stream almost dried up.",
            "The stream bubbled quietly through the meadow.",
            "Frogs croaked along the banks of the stream.",
        ],
        "video": [
            "Thousands of fans watched the live stream of the concert.",
            "{who} started a stream to play the new game with viewers.",
            "The stream kept buffering during the final.",
            "The conference offered a free stream for remote attendees.",
            "Her cooking stream gets more views every week.",
            "The stream went offline halfway through the match.",
            "We watched the launch {when} on a stream from the space agency.",
            "Chat was busy throughout the charity stream.",
            "The gamer ended the stream after eight hours.",
            "The stream quality dropped to low resolution.",
            "{who} shared a link to the stream in the group chat.",
            "The stream had subtitles for the speeches.",
        ],
    },
    "cloud": {
        "sky": [
            "A dark cloud drifted over the hills {when}.",
            "Not a single cloud was in the sky.",
            "The storm cloud brought heavy rain by evening.",
            "{who} pointed at a cloud shaped like a rabbit.",
            "The sun slipped behind a cloud.",
            "A thin cloud hung over the mountain peak.",
            "The pilot flew straight through the cloud.",
            "A cloud of mist rolled across the valley at dawn.",
            "Thunder rumbled from the black cloud.",
            "The cloud cleared and the stars came out.",
            "A pink cloud glowed at sunset.",
            "The forecast warned of low cloud on the coast.",
        ],
        "computing": [
            "All our files are backed up in the cloud.",
            "{who} moved the company's email to the cloud.",
            "The app syncs your photos to the cloud automatically.",
            "The cloud provider had an outage {when}.",
            "The startup runs all of its software in the cloud.",
            "You can reach the documents in the cloud from any device.",
            "Our cloud bill doubled after the update.",
            "Data in the cloud is encrypted at rest.",
            "The team migrated the database to the cloud.",
            "{who} uploaded the backups to the cloud before the trip.",
            "The cloud service charges by the hour.",
            "Most of their computing now happens in the cloud.",
        ],
    },
    "viral": {
        "disease": [
            "The doctor said it was a viral infection, not a bacterial one.",
            "Antibiotics do not work against a viral illness.",
            "The viral load in the blood sample was low.",
            "{who} caught a viral fever {when}.",
            "The lab studies viral proteins in mosquitoes.",
            "A viral outbreak closed the school for a week.",
            "The vet suspected a viral disease in the herd.",
            "Scientists tracked how the viral strain mutated.",
            "The rash was a sign of a viral illness.",
            "Rest and fluids help with most viral colds.",
            "The vaccine protects against a common viral disease.",
            "{who} was treated for viral pneumonia.",
        ],
        "internet": [
            "The dancing cat video went viral overnight.",
            "Her post went viral and reached millions.",
            "{who} made a viral video about folding shirts.",
            "The brand hoped the advert would go viral.",
            "A viral meme about the exam spread across campus.",
            "The song became a viral hit on social media.",
            "His joke went viral within hours.",
            "The hashtag went viral after the match {when}.",
            "Marketers study what makes a clip viral.",
            "A viral photo of the queue made the news.",
            "The recipe went viral and the bakery sold out.",
            "{who} has no idea why the clip went viral.",
        ],
    },
    "spam": {
        "meat": [
            "{who} fried some spam for breakfast.",
            "A tin of spam sat at the back of the cupboard.",
            "The sandwich had spam, cheese and pickles.",
            "Soldiers lived on spam during the war.",
            "Grandma made fritters with spam and egg.",
            "We took spam and crackers on the camping trip.",
            "The café served spam with rice {when}.",
            "A slice of spam sizzled in the pan.",
            "He opened the spam with the key on the side of the tin.",
            "The recipe used diced spam instead of ham.",
            "The stall sold spam wrapped in rice and seaweed.",
            "{who} still likes spam with baked beans.",
        ],
        "junk mail": [
            "My inbox is full of spam again.",
            "The filter sent the invoice to spam by mistake.",
            "{who} reported the message as spam.",
            "The spam promised a prize I never entered.",
            "Delete any spam asking for your password.",
            "The mail server blocks most spam before it arrives.",
            "We get hundreds of spam emails a day.",
            "The spam folder caught the job offer {when}.",
            "Bots post spam in the comments every hour.",
            "Mark it as spam and move on.",
            "The newsletter ended up in spam.",
            "{who} clicked a link in some spam and lost money.",
        ],
    },
    "tablet": {
        "pill": [
            "Take one tablet twice a day with food.",
            "The nurse gave {who} a tablet for the pain.",
            "Swallow the tablet whole with water.",
            "The doctor prescribed a small white tablet.",
            "A headache tablet usually works within an hour.",
            "{who} dissolved the tablet in a glass of water.",
            "Do not crush the tablet before taking it.",
            "She forgot to take her iron tablet {when}.",
            "The pharmacist explained how to cut the tablet in half.",
            "Each tablet contains fifty milligrams of the drug.",
            "The vitamin tablet tasted of orange.",
            "He keeps a sleeping tablet by the bed.",
        ],
        "device": [
            "{who} reads the news on a tablet every morning.",
            "The kids watched cartoons on the tablet in the car.",
            "The tablet has a bigger screen than my phone.",
            "The waiter took our order on a tablet.",
            "My tablet needs a software update.",
            "She sketches designs on a tablet with a stylus.",
            "The school gave every pupil a tablet.",
            "The tablet battery lasts a whole day.",
            "I video called grandma on the tablet {when}.",
            "The tablet keyboard snaps onto the case.",
            "{who} left the tablet charging in the lounge.",
            "Apps on the tablet open faster after the reset.",
        ],
    },
    "web": {
        "spider": [
            "A spider spun a web across the doorway.",
            "Dew sparkled on the web in the morning light.",
            "A fly was stuck in the sticky web.",
            "{who} walked straight into a web in the shed.",
            "The spider repaired its web every night.",
            "An orb web stretched between two branches.",
            "The web trembled as the spider moved.",
            "The web caught the sunlight like silver thread.",
            "Children watched a spider weave its web on the fence.",
            "The web was torn by the wind {when}.",
            "She gently brushed the web off the bicycle.",
            "{who} photographed a web covered in frost.",
        ],
        "internet": [
            "{who} searched the web for a cheap flight.",
            "The company launched a new web shop.",
            "Most of the web runs on open standards.",
            "I found the recipe on the web {when}.",
            "The web browser crashed again.",
            "Our web designer changed the fonts.",
            "The library offers free web access.",
            "The web page took ages to load.",
            "She builds web apps for small businesses.",
            "Information on the web is not always reliable.",
            "The old web forum closed down.",
            "The web address was printed on the flyer.",
        ],
    },
}

# word -> (kind, (old-dominant sense, other sense), changing sense, share_old, share_new)
# share_* = share of the changing sense among the word's usages at change_strength 1.
# Reporting frames that wrap a declarative sentence for variety ({s} = the sentence, first
# letter lowered); imperatives (first word in IMPERATIVE) are never wrapped.
FRAMES = ["{who} said that {s}", "I read that {s}", "Apparently, {s}", "{who} told me that {s}",
          "It turns out that {s}", "I remember that {s}", "Somebody mentioned that {s}",
          "As it happens, {s}"]
IMPERATIVE = {"take", "swallow", "do", "call", "please", "click", "move", "double-click", "plug",
              "drag", "don't", "ignore", "delete", "mark", "rewind", "put", "use", "pull", "type",
              "swap", "buy", "toast"}


def frame(sentence: str, template: str, who: str) -> str:
    """Wrap `sentence` in a reporting frame (caller checks it is not an imperative)."""
    first = sentence.split(" ", 1)[0]
    body = sentence if first in ("I", "I'm") or first.startswith("I'") else sentence[:1].lower() + sentence[1:]
    out = template.replace("{who}", who).replace("{s}", body)
    return out[:1].upper() + out[1:]


def is_imperative(sentence: str) -> bool:
    return sentence.split(" ", 1)[0].lower().rstrip(",") in IMPERATIVE


TARGETS = {
    "tweet": ("gain", ("bird", "post"), "post", 0.00, 0.90),
    "cell": ("gain", ("biology", "phone"), "phone", 0.05, 0.85),
    "mouse": ("gain", ("animal", "device"), "device", 0.05, 0.75),
    "troll": ("gain", ("folklore", "internet"), "internet", 0.00, 0.65),
    "stream": ("gain", ("water", "video"), "video", 0.05, 0.60),
    "cloud": ("gain", ("sky", "computing"), "computing", 0.05, 0.50),
    "viral": ("gain", ("disease", "internet"), "internet", 0.10, 0.45),
    "spam": ("gain", ("meat", "junk mail"), "junk mail", 0.10, 0.35),
    "tablet": ("gain", ("pill", "device"), "device", 0.05, 0.25),
    "web": ("gain", ("spider", "internet"), "internet", 0.10, 0.20),
    "tape": ("loss", ("cassette", "adhesive"), "cassette", 0.70, 0.15),
    "film": ("loss", ("photographic", "movie"), "photographic", 0.50, 0.15),
    "letter": ("loss", ("postal", "alphabet"), "postal", 0.60, 0.45),
}
CONTROLS = {w: ("stable", (s,), s, 0.0, 0.0) for w, s in (
    ("table", "furniture"), ("river", "water"), ("bread", "food"), ("window", "building"),
    ("chair", "furniture"), ("garden", "outdoors"))}

TEMPLATES = {**GAIN_TEMPLATES, **MORE_TEMPLATES}
ADJECTIVES = {"viral"}          # words that take the adjective vague templates


def vague_templates(word: str) -> list[str]:
    """Sense-ambiguous templates for `word` (used for the `noise` share of usages)."""
    table = VAGUE_ADJ if word in ADJECTIVES else VAGUE_NOUN
    return [t.replace("{w}", word) for t in table]
