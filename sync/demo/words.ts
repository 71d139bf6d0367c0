/**
 * Vocabulary for plausible demo venue names and event titles, one title maker per category of
 * the taxonomy (docs/upstream-records.md), so every category appears with titles that fit it.
 */
import type { Random } from "./random.ts";

const FIRST = [
  "Ava",
  "Ben",
  "Carmen",
  "Dev",
  "Elena",
  "Felix",
  "Grace",
  "Hiro",
  "Imani",
  "Jonah",
  "Kai",
  "Lena",
  "Marcus",
  "Nina",
  "Omar",
  "Priya",
  "Quinn",
  "Rosa",
  "Sam",
  "Tessa",
  "Uma",
  "Victor",
  "Willa",
  "Xavier",
  "Yara",
  "Zoë",
  "José",
  "Aaliyah",
  "Björn",
  "Chloé",
  "Declan",
  "Esperanza",
  "Malik",
  "Noor",
  "Ruth",
  "Theo",
];
const LAST = [
  "Abbott",
  "Banks",
  "Castillo",
  "Dawson",
  "Ellis",
  "Fujita",
  "Garza",
  "Hayes",
  "Ibarra",
  "Jensen",
  "Kowalski",
  "Lindqvist",
  "Moreno",
  "Nakamura",
  "Okafor",
  "Patel",
  "Quintero",
  "Reyes",
  "Sullivan",
  "Thompson",
  "Underwood",
  "Vasquez",
  "Whitaker",
  "Young",
  "Zamora",
  "O'Neill",
  "Nguyen",
  "Haddad",
  "McAllister",
  "Rivera",
];
const ADJ = [
  "Velvet",
  "Electric",
  "Midnight",
  "Golden",
  "Wild",
  "Silver",
  "Crimson",
  "Lonesome",
  "Neon",
  "Hollow",
  "Atomic",
  "Dusty",
  "Northern",
  "Paper",
  "Broken",
  "Bright",
  "Quiet",
  "Savage",
  "Lucky",
  "Blue",
];
const NOUN = [
  "Coyotes",
  "Lanterns",
  "Rivers",
  "Pilots",
  "Sparrows",
  "Machines",
  "Saints",
  "Wolves",
  "Echoes",
  "Arrows",
  "Satellites",
  "Thieves",
  "Horses",
  "Magnolias",
  "Strangers",
  "Owls",
  "Comets",
  "Ghosts",
  "Tigers",
  "Kings",
];
const TOUR = ["World Tour", "Summer Tour", "Farewell Tour", "Album Release Show", "Acoustic Evening", "Live"];
const PLAYS = [
  "Hamlet",
  "Macbeth",
  "Twelfth Night",
  "Much Ado About Nothing",
  "A Midsummer Night's Dream",
  "Our Town",
  "A Doll's House",
  "The Importance of Being Earnest",
  "The Cherry Orchard",
  "Peter Pan",
  "Little Women",
  "The Wizard of Oz",
  "Pride and Prejudice",
  "Romeo and Juliet",
  "The Seagull",
];
const FILMS = [
  "Casablanca",
  "Metropolis",
  "Nosferatu",
  "The General",
  "It Happened One Night",
  "Sunrise",
  "The Kid",
  "His Girl Friday",
  "Modern Times",
  "The Third Man",
];
const FESTIVAL_THEMES = [
  "Jazz",
  "Blues",
  "Folk",
  "Bluegrass",
  "Chili Cook-Off",
  "Craft Beer",
  "Wine",
  "Arts",
  "Street",
  "Harvest",
  "Food Truck",
  "Film",
  "Hot Air Balloon",
  "Cherry Blossom",
  "Oyster",
  "Music",
];
const MASCOTS = [
  "Hawks",
  "Bears",
  "Lions",
  "Wolves",
  "Tigers",
  "Eagles",
  "Knights",
  "Storm",
  "Thunder",
  "Rangers",
  "Comets",
  "Pioneers",
];
const SPORTS = ["Basketball", "Baseball", "Hockey", "Soccer", "Volleyball", "Football", "Lacrosse", "Roller Derby"];
const CUISINES = [
  "Oaxacan",
  "Korean",
  "Neapolitan",
  "Ethiopian",
  "Cajun",
  "Sichuan",
  "Basque",
  "Lebanese",
  "Texas BBQ",
];
const SKILLS = [
  "Pottery",
  "Watercolor",
  "Photography",
  "Bread Baking",
  "Candle Making",
  "Knife Skills",
  "Screen Printing",
  "Python",
];
const CAUSES = [
  "Food Bank",
  "Animal Rescue",
  "Literacy",
  "Children's Hospital",
  "Clean Rivers",
  "Veterans",
  "Public Library",
];
const FIELDS = ["Tech", "Design", "Finance", "Real Estate", "Healthcare", "Hospitality"];
/** Holiday events with the day (month 1-12, day) they cluster before. */
export const HOLIDAY_DATES: Record<string, readonly [number, number]> = {
  "Holiday Lights Walk": [12, 20],
  "New Year's Eve Countdown": [12, 31],
  "Halloween Spooktacular": [10, 31],
  "Fourth of July Fireworks": [7, 4],
  "Thanksgiving Turkey Trot": [11, 26],
  "St. Patrick's Day Parade": [3, 17],
  "Lunar New Year Celebration": [2, 1],
  "Día de los Muertos Festival": [11, 2],
  "Winter Solstice Market": [12, 21],
  "🎃 Pumpkin Patch Weekend": [10, 20],
};
const HOLIDAYS = Object.keys(HOLIDAY_DATES);

export const person = (r: Random) => `${r.pick(FIRST)} ${r.pick(LAST)}`;
const band = (r: Random) =>
  r.chance(0.6) ? `The ${r.pick(ADJ)} ${r.pick(NOUN)}` : r.chance(0.5) ? person(r) : `DJ ${r.pick(ADJ)}`;

/** One title maker per category; `city` is the venue's city. */
export const TITLES: Record<string, (r: Random, city: string) => string> = {
  Music: (r) =>
    r.weighted([
      [5, () => band(r)],
      [3, () => `${band(r)} with ${band(r)}`],
      [3, () => `${band(r)}: ${r.pick(TOUR)}`],
      [1, () => `Symphony Night: ${r.pick(["Beethoven", "Mahler", "Dvořák", "Brahms"])} ${r.int(1, 9)}`],
    ])(),
  Comedy: (r) =>
    r.weighted([
      [4, () => `${person(r)} Live`],
      [2, () => `${person(r)}: ${r.pick(ADJ)} ${r.pick(["Thoughts", "Habits", "Feelings"])} Tour`],
      [2, () => r.pick(["Open Mic Comedy Night", "Stand-Up Showcase", "Improv Jam", "Late Night Laughs"])],
    ])(),
  Theater: (r) => (r.chance(0.7) ? r.pick(PLAYS) : `${r.pick(PLAYS)} (${r.pick(ADJ)} Stage Company)`),
  Dance: (r) =>
    r.pick(["The Nutcracker", "Swan Lake", "Salsa Night", "Contemporary Dance Showcase", "Tango Milonga", "Giselle"]),
  Festivals: (r, city) => `${city} ${r.pick(FESTIVAL_THEMES)} Festival`,
  Sports: (r, city) =>
    r.chance(0.7)
      ? `${city} ${r.pick(MASCOTS)} vs. ${r.pick(["Springfield", "Riverside", "Fairview", "Madison", "Clinton"])} ${r.pick(MASCOTS)}`
      : `${city} ${r.pick(SPORTS)} Classic`,
  "Food & Drink": (r) =>
    r.pick([
      `${r.pick(CUISINES)} Pop-Up Dinner`,
      "Craft Beer Tasting",
      "Wine & Cheese Pairing",
      "Oyster Night",
      "Taco Tuesday",
    ]),
  Arts: (r) =>
    r.pick([`Opening Reception: ${person(r)}`, "First Friday Art Walk", `${r.pick(ADJ)} Visions: Group Exhibition`]),
  Film: (r) => (r.chance(0.5) ? `${r.pick(FILMS)} (35mm)` : `Outdoor Movie Night: ${r.pick(FILMS)}`),
  Family: (r) =>
    r.pick([
      `Storytime with ${r.pick(FIRST)}`,
      "Family Science Day",
      "Puppet Show: The Three Little Pigs",
      "Kids' Dance Party",
    ]),
  Community: (r) =>
    r.pick(["Neighborhood Cleanup", "Farmers Market", "Town Hall Meeting", "Community Potluck", "Blood Drive"]),
  Nightlife: (r) =>
    r.pick([
      `${r.pick(ADJ)} Nights: ${r.pick(["80s", "90s", "2000s"])} Dance Party`,
      "Karaoke Night",
      "Drag Brunch",
      "Silent Disco",
    ]),
  "Classes & Workshops": (r) => (r.chance(0.5) ? `Intro to ${r.pick(SKILLS)}` : `${r.pick(SKILLS)} Workshop`),
  Literature: (r) => r.pick([`Author Talk: ${person(r)}`, "Poetry Slam", "Book Club: Moby-Dick", "Zine Fest"]),
  Fitness: (r) => r.pick(["Sunrise Yoga", "5K Fun Run", "Bootcamp in the Park", "Spin Class", "Pilates on the Lawn"]),
  Outdoors: (r) => r.pick(["Guided Bird Walk", "Sunset Hike", "Stargazing Night", "Kayak Paddle", "Wildflower Walk"]),
  Tours: (r, city) => r.pick([`Historic ${city} Walking Tour`, "Ghost Tour", "Brewery Tour", "Architecture Walk"]),
  Charity: (r) =>
    r.pick([`${r.pick(CAUSES)} Benefit Gala`, `Charity Auction for the ${r.pick(CAUSES)}`, `${r.pick(CAUSES)} 5K`]),
  "Business & Networking": (r, city) =>
    r.pick([
      `${city} ${r.pick(FIELDS)} Meetup`,
      "Startup Pitch Night",
      "Small Business Expo",
      `Women in ${r.pick(FIELDS)} Mixer`,
    ]),
  Holiday: (r) => r.pick(HOLIDAYS),
  Other: (r) => r.pick(["Trivia Night", "Flea Market", "Psychic Fair", "Classic Car Show", "Board Game Night"]),
};

export const SPAM_TITLES = [
  "!!! FREE TICKETS click here !!!",
  "BEST PRICE TICKETS $$$ buy now",
  "Win a free cruise - limited offer",
  "cheap tix cheap tix cheap tix",
];

// ---- Venues -----------------------------------------------------------------------------------

/** Venue kinds with the categories their events mostly fall into. */
export const VENUE_KINDS: ReadonlyArray<{ kind: string; weight: number; categories: readonly string[] }> = [
  { kind: "Theater", weight: 10, categories: ["Theater", "Music", "Comedy", "Dance", "Film"] },
  { kind: "Music Hall", weight: 9, categories: ["Music", "Nightlife"] },
  { kind: "Ballroom", weight: 4, categories: ["Music", "Dance", "Nightlife", "Charity"] },
  { kind: "Arena", weight: 3, categories: ["Sports", "Music", "Family"] },
  { kind: "Stadium", weight: 2, categories: ["Sports", "Music", "Festivals"] },
  { kind: "Amphitheater", weight: 3, categories: ["Music", "Festivals", "Theater"] },
  { kind: "Comedy Club", weight: 5, categories: ["Comedy", "Nightlife"] },
  { kind: "Jazz Club", weight: 3, categories: ["Music", "Nightlife"] },
  { kind: "Tavern", weight: 6, categories: ["Music", "Nightlife", "Food & Drink", "Other"] },
  { kind: "Brewing Co.", weight: 5, categories: ["Food & Drink", "Music", "Other", "Fitness"] },
  { kind: "Gallery", weight: 4, categories: ["Arts", "Community", "Classes & Workshops"] },
  { kind: "Park", weight: 5, categories: ["Outdoors", "Festivals", "Family", "Fitness", "Community", "Holiday"] },
  { kind: "Public Library", weight: 4, categories: ["Literature", "Family", "Classes & Workshops", "Community"] },
  {
    kind: "Community Center",
    weight: 4,
    categories: ["Community", "Classes & Workshops", "Charity", "Fitness", "Holiday"],
  },
  { kind: "Convention Center", weight: 2, categories: ["Business & Networking", "Festivals", "Other"] },
  { kind: "Cinema", weight: 3, categories: ["Film", "Family"] },
  { kind: "Visitor Center", weight: 2, categories: ["Tours", "Outdoors", "Holiday"] },
  { kind: "Opera House", weight: 1, categories: ["Music", "Theater", "Dance"] },
];

const VENUE_WORDS = [
  "Fillmore",
  "Paramount",
  "Orpheum",
  "Majestic",
  "Bluebird",
  "Riviera",
  "Crescent",
  "Lyric",
  "Empire",
  "Palace",
];

export function venueName(r: Random, kind: string, city: string): string {
  return r.weighted([
    [3, () => `The ${r.pick(VENUE_WORDS)} ${kind}`],
    [2, () => `${city} ${kind}`],
    [2, () => `${r.pick(LAST)} ${kind}`],
    [2, () => `The ${r.pick(ADJ)} ${r.pick(NOUN).slice(0, -1)}`],
    [1, () => `${r.int(1, 999)} ${r.pick(["Main", "Elm", "Market", "Union", "Water"])} Street ${kind}`],
  ])();
}

/** Lowercase ASCII words joined by `-`, for slugs, hostnames and source tokens. */
export function slugify(text: string, max = 48): string {
  return slugOf(text, max);
}

function slugOf(text: string, max: number): string {
  const slug = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return slug.slice(0, max).replace(/-+$/, "") || "event";
}
