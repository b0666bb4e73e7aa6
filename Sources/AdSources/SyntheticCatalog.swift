/// The word lists the synthetic source composes ads from: one theme per advertiser vertical.
///
/// Templates use `{product}`, `{advertiser}`, `{benefit}` and `{number}` placeholders.
/// Everything here is invented; advertiser names are not real companies.
enum SyntheticCatalog {
    struct Theme: Sendable {
        /// Short lowercase name, used in asset paths.
        var name: String
        /// Request keywords that select this theme.
        var keywords: [String]
        var advertisers: [String]
        var products: [String]
        var benefits: [String]
        var headlines: [String]
        var bodies: [String]
        var callsToAction: [String]
        /// Probability that an ad of this theme promotes an app (with store, price and rating).
        var appShare: Double
        /// Web offers' prices, e.g. "From $19"; empty when this theme's web ads have none.
        var webPrices: [String]
    }

    static let themes: [Theme] = [
        Theme(
            name: "travel", keywords: ["travel", "trip", "flight", "flights", "hotel", "vacation", "holiday"],
            advertisers: ["Wayfarer Trips", "Bluewing Air", "Harbor & Pine Hotels", "Nomad Rail", "Sunspot Getaways"],
            products: ["weekend escape", "city break", "coastal retreat", "mountain lodge", "island hopper pass"],
            benefits: ["free cancellation", "breakfast included", "no booking fees", "late checkout"],
            headlines: [
                "Your next {product} is closer than you think", "{advertiser}: {product} deals this week",
                "Book a {product} with {benefit}", "Up to {number}% off your {product}",
            ],
            bodies: [
                "Compare prices from hundreds of providers and book with {benefit}.",
                "Handpicked stays for every budget. {advertiser} members save more.",
                "Plan, book and go in minutes. {benefit} on selected dates.",
            ],
            callsToAction: ["Book now", "See deals", "Explore", "Check prices"], appShare: 0.3,
            webPrices: ["From $79", "From $129", "From $249"]),
        Theme(
            name: "finance", keywords: ["finance", "money", "bank", "banking", "invest", "investing", "savings"],
            advertisers: ["Ledgerly", "Northvale Bank", "Coinwise", "Tallyhoo Budget", "Brightpath Invest"],
            products: ["savings account", "budgeting app", "travel card", "managed portfolio", "spending tracker"],
            benefits: ["no monthly fees", "instant notifications", "{number} free transfers", "round-up savings"],
            headlines: [
                "A {product} with {benefit}", "{advertiser}: money made simple",
                "Switch to a {product} in {number} minutes", "Why thousands pick {advertiser}",
            ],
            bodies: [
                "Open a {product} from your phone. {benefit}, cancel anytime.",
                "See where your money goes with {advertiser}. Set goals, track spending, save more.",
                "Capital at risk. {advertiser} is a fictional provider used for testing.",
            ],
            callsToAction: ["Open account", "Get started", "Learn more", "Sign up"], appShare: 0.6, webPrices: []),
        Theme(
            name: "food", keywords: ["food", "recipe", "recipes", "cooking", "restaurant", "delivery", "grocery"],
            advertisers: ["Saffron Box", "Crumb & Co.", "Greenfork Delivery", "Pantry Pal", "Little Oven Bakery"],
            products: [
                "meal kit", "weekly veggie box", "sourdough starter kit", "family dinner plan", "spice sampler",
            ],
            benefits: ["free delivery", "{number} recipes a week", "skip any week", "farm-fresh produce"],
            headlines: [
                "Dinner sorted: try a {product}", "{advertiser}: {benefit} on your first order",
                "{number}% off your first {product}", "Cook something new tonight",
            ],
            bodies: [
                "Fresh ingredients and easy recipes delivered to your door, with {benefit}.",
                "{advertiser} makes weeknight cooking easy. Pause or cancel anytime.",
                "Pick from {number} dishes every week. {benefit} for new customers.",
            ],
            callsToAction: ["Order now", "Claim offer", "See menu", "Try it"], appShare: 0.4,
            webPrices: ["From $6.99 a meal", "$29.99", "$12"]),
        Theme(
            name: "fitness", keywords: ["fitness", "health", "workout", "running", "yoga", "gym", "sport"],
            advertisers: ["Stridewell", "Core Habit", "Peak Pulse", "Lotus Flow Yoga", "IronLeaf Gym"],
            products: [
                "running plan", "home workout program", "yoga membership", "smart jump rope", "recovery roller",
            ],
            benefits: ["{number}-day free trial", "coach-led classes", "plans for every level", "no equipment needed"],
            headlines: [
                "Get stronger with a {product}", "{advertiser}: {benefit}",
                "{number} minutes a day is all it takes", "Your {product}, your pace",
            ],
            bodies: [
                "Personal plans that adapt to you. Start with a {benefit}.",
                "Join {advertiser} and train anywhere with {benefit}.",
                "Track progress, stay motivated, and reach your goals with a {product}.",
            ],
            callsToAction: ["Start free trial", "Join now", "Install", "Shop now"], appShare: 0.55,
            webPrices: ["$24.99", "$39", "From $9 a month"]),
        Theme(
            name: "games", keywords: ["games", "game", "gaming", "puzzle", "arcade", "strategy", "play"],
            advertisers: ["Pixel Harbor", "Tinycastle Games", "Orbit Owl Studio", "Mossbyte", "Quickfuse Arcade"],
            products: ["puzzle adventure", "tower defense saga", "word quest", "kart racer", "farm builder"],
            benefits: ["{number} levels", "daily rewards", "play offline", "co-op with friends"],
            headlines: [
                "Can you beat level {number}?", "{advertiser} presents: the {product}",
                "The {product} everyone is talking about", "{benefit}, no wifi needed",
            ],
            bodies: [
                "A relaxing {product} with {benefit}. Easy to learn, hard to put down.",
                "Build, battle and explore in {advertiser}'s newest {product}.",
                "Join millions of players. {benefit} and new events every week.",
            ],
            callsToAction: ["Play now", "Install", "Download", "Get it free"], appShare: 0.95, webPrices: []),
        Theme(
            name: "tech", keywords: ["tech", "technology", "phone", "laptop", "software", "gadget", "electronics"],
            advertisers: ["Voltcraft Labs", "Clearview Audio", "Nimbus Cloud", "Kestrel Devices", "Bytewise"],
            products: [
                "noise-cancelling headphones", "ultralight laptop", "cloud backup plan", "smart speaker",
                "USB-C dock",
            ],
            benefits: ["{number}-hour battery", "free shipping", "2-year warranty", "setup in minutes"],
            headlines: [
                "Meet the {product} with {benefit}", "{advertiser}: the {product}, reimagined",
                "Save {number}% on the {product}", "Upgrade your desk: the {product}",
            ],
            bodies: [
                "Designed for work and play, with {benefit}.",
                "{advertiser} builds gear that just works. {benefit} on every order.",
                "Rated by thousands of customers. Order today, {benefit}.",
            ],
            callsToAction: ["Shop now", "Buy now", "Learn more", "Compare models"], appShare: 0.2,
            webPrices: ["$49.99", "$129.00", "$899", "$3.99 a month"]),
        Theme(
            name: "fashion", keywords: ["fashion", "clothing", "shoes", "style", "apparel", "sneakers"],
            advertisers: ["Thread & Tide", "Marlowe Studio", "Rookstep Shoes", "Linen Lane", "Kite Outerwear"],
            products: ["linen shirt", "everyday sneaker", "rain jacket", "wool sweater", "canvas tote"],
            benefits: ["free returns", "sustainably made", "{number}% off new arrivals", "free shipping"],
            headlines: [
                "The {product} you'll wear all year", "{advertiser}: {benefit}",
                "New season, new {product}", "{number}% off the {product} this weekend",
            ],
            bodies: [
                "Timeless pieces, {benefit}. Find your fit at {advertiser}.",
                "A {product} made to last, with {benefit}.",
                "Members get early access and {benefit}.",
            ],
            callsToAction: ["Shop now", "Shop the look", "See collection", "Buy now"], appShare: 0.15,
            webPrices: ["$39", "$89", "$149", "From $25"]),
        Theme(
            name: "home", keywords: ["home", "garden", "furniture", "decor", "diy", "kitchen"],
            advertisers: ["Hearthstone Living", "Fernhill Garden", "Oakmoor Furniture", "Brightnest", "Tidy Den"],
            products: [
                "reading chair", "raised garden bed", "linen bedding set", "smart thermostat", "storage system",
            ],
            benefits: ["free delivery", "{number}-night trial", "easy assembly", "5-year guarantee"],
            headlines: [
                "Make room for a {product}", "{advertiser}: {benefit} on all orders",
                "Refresh your space with a {product}", "{number}% off the {product}",
            ],
            bodies: [
                "Comfort that fits your home, with {benefit}.",
                "{advertiser} brings designer quality without the markup. {benefit}.",
                "Thousands of five-star reviews. Order today with {benefit}.",
            ],
            callsToAction: ["Shop now", "See more", "Get a quote", "Learn more"], appShare: 0.2,
            webPrices: ["$59", "$249", "$499", "From $19"]),
        Theme(
            name: "auto", keywords: ["auto", "car", "cars", "vehicle", "ev", "electric", "driving"],
            advertisers: ["Voltway Motors", "Roadline Insurance", "Parkpilot", "Greenmile EV", "Axle & Co."],
            products: ["electric hatchback", "car insurance quote", "parking app", "home charger", "service plan"],
            benefits: [
                "{number} miles of range", "quotes in {number} minutes", "roadside assistance",
                "no hidden fees",
            ],
            headlines: [
                "Test drive the {product}", "{advertiser}: {benefit}", "Is it time for a {product}?",
                "Drivers save {number}% with {advertiser}",
            ],
            bodies: [
                "Compare and switch in minutes, with {benefit}.",
                "The {product} from {advertiser}: {benefit}, zero fuss.",
                "Book online and we'll handle the rest. {benefit} included.",
            ],
            callsToAction: ["Get a quote", "Book a test drive", "Learn more", "Install"], appShare: 0.35,
            webPrices: ["From $29 a month", "$599", "From $19,990"]),
        Theme(
            name: "education", keywords: ["education", "learn", "learning", "course", "language", "books", "study"],
            advertisers: ["Lingo Grove", "Brightboard Academy", "Pagecraft Books", "Skillsprout", "Owlnote"],
            products: ["language course", "coding bootcamp", "audiobook library", "flashcard app", "math tutor"],
            benefits: ["{number} minutes a day", "learn at your own pace", "certificates included", "first week free"],
            headlines: [
                "Learn a new skill with {advertiser}", "{advertiser}: {benefit}",
                "Fluent in {number} months?", "The {product} that fits your schedule",
            ],
            bodies: [
                "Bite-sized lessons, {benefit}. Start today with {advertiser}.",
                "Join learners in {number} countries. {benefit}.",
                "Expert-made lessons that adapt to you, from {advertiser}.",
            ],
            callsToAction: ["Start learning", "Enroll now", "Install", "Try free"], appShare: 0.7,
            webPrices: ["$9.99 a month", "$199", "From $4"]),
    ]

    static let stores = ["App Store", "Google Play"]
    static let appPrices = ["Free", "Free", "Free", "$0.99", "$2.99", "$4.99"]
    static let numbers = [3, 5, 7, 10, 12, 15, 20, 25, 30, 40, 50, 100]
}
