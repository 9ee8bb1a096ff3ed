"""A generated support-ticket archive with retrieval questions (issue 37), written from a seed.

The corpus is the kind of semi-structured text issue 37's user indexed: every passage is one ticket, titled
``Ticket FH-<n>``, with form fields (``Date:``, ``Status:``, ``Priority:``, ``Channel:``, ``Customer:``,
``Site:``, ``Agent:``, ``Product:``, ``Serial:``) and two free-text fields (``Problem:``, ``Resolution:``)
where the real facts live. Ticket numbers, serial numbers, dates, invoice numbers and part codes differ
from ticket to ticket by a digit or two, as in a real archive: embedding similarity alone joins them.

The facts that questions need, each stated in exactly one ticket:

* an **installation** ticket per site: which pump model (and serial number) was installed at the site,
  for which customer;
* a **defect** ticket per pump model: engineering's diagnosis of the model's known defect and the part
  (or firmware) that fixes it;
* a **takeover** ticket for a few sites: the site passed from one customer to another (so a question
  asked by the new owner needs three tickets: takeover -> installation -> defect).

The rest are routine tickets (invoices, portal logins, noise, scheduled visits, firmware questions) that
name the same customers, sites and pump models: hard negatives, and the boilerplate that makes hubs.

Questions (``questions.json``, the plain format of ``hipporag_neo4j.evaluation.loaders``:
``{"id", "question", "answer", "gold_titles"}``):

* ``id-*``: asked by ticket number or serial number (one gold ticket): exact identifiers must keep working;
* ``defect-*``: the fix of a pump model's known defect (one gold ticket);
* ``site-*`` / ``customer-*``: the fix for the pump at a site / of a customer (installation + defect);
* ``takeover-*``: the fix for the pump at the site a customer took over (takeover + installation + defect).

    python benchmarks/ticket_corpus.py                 # writes tests/data/tickets/ (seed 37)
    python benchmarks/ticket_corpus.py --check         # exits 1 when the committed files differ
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import date, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "data" / "tickets"
SEED = 37
FIRST_TICKET = 1900
N_TICKETS = 240

#: model -> (serial prefix, the known defect as engineering states it, symptom a customer reports, the fix)
MODELS: dict[str, tuple[str, str, str, str]] = {
    "Harrier H2": (
        "HH2",
        "the impeller housing cracks after repeated cold starts below freezing",
        "water spraying from the pump casing after a frosty night",
        "impeller kit PK-4471",
    ),
    "Kestrel K7": (
        "KK7",
        "the shaft seal wears out after about 2,000 running hours",
        "a steady leak at the drive end of the pump",
        "seal kit SK-2210",
    ),
    "Osprey O4": (
        "OO4",
        "the pressure sensor reports false low readings when the line warms up",
        "the pump stopping on a low-pressure alarm every afternoon",
        "firmware release 4.2.1",
    ),
    "Merlin M3": (
        "MM3",
        "the rear bearing overheats because its grease channel is too narrow",
        "a burning smell and a hot motor end",
        "bearing assembly BA-7730",
    ),
    "Falcon F9": (
        "FF9",
        "the check valve sticks closed after the pump stands idle for a week",
        "no flow after the weekend although the motor runs",
        "valve kit VK-0918",
    ),
    "Condor C5": (
        "CC5",
        "the motor controller trips on short voltage dips from the grid",
        "the pump shutting down during storms with controller fault E21",
        "controller board CB-5520",
    ),
    "Swift S1": (
        "SS1",
        "the diaphragm tears when the outlet pressure exceeds 6 bar",
        "milky fluid in the drain line and falling pressure",
        "diaphragm kit DK-3302",
    ),
    "Heron N6": (
        "HN6",
        "the control panel display freezes when the cabinet heater is on",
        "a frozen display that ignores the buttons",
        "display module DM-6614",
    ),
}

#: customer -> its site (one site each)
CUSTOMERS: dict[str, str] = {
    "Maple Ridge Orchards": "Cedar Falls pumping station",
    "Bluewater Dairy": "Harlow Creek plant",
    "Greyfield Farms": "North Paddock borehole",
    "Sunvale Brewery": "Old Mill yard",
    "Ashcombe Golf Club": "Lakeside irrigation hut",
    "Riverbend Municipal Water": "Quarry Lane reservoir",
    "Pinecrest Greenhouses": "Glasshouse Row 3",
    "Tidewater Fisheries": "Harbour Road hatchery",
    "Copperhill Mining": "Shaft 2 dewatering sump",
    "Elmstead Vineyards": "South Terrace well",
    "Northgate Hospital": "Boiler house basement",
    "Kingsway Hotels": "Kingsway Riverside hotel",
    "Oakmoor Paper Mill": "Pulp line intake",
    "Silverlake Campground": "Shower block tank",
    "Bramble Hill School": "Sports field borehole",
    "Westmarch Logistics": "Depot 4 wash bay",
    "Fernleigh Laundry": "Unit 9 boiler room",
    "Highmoor Estates": "Stable yard cistern",
}

#: site -> the customer that owned it before a takeover (the installation ticket names the old owner)
TAKEOVERS: dict[str, str] = {
    "Lakeside irrigation hut": "Marsh Lane Leisure",
    "Shower block tank": "Pinewood Holidays",
    "Depot 4 wash bay": "Carter Haulage",
    "Stable yard cistern": "Lowther Riding School",
    "Unit 9 boiler room": "Brightwash Services",
}

AGENTS = [
    "Dana Whitfield",
    "Omar Haddad",
    "Priya Raman",
    "Lukas Brenner",
    "Sofia Marchetti",
    "Tom Okafor",
    "Hannah Lindqvist",
    "Mateo Alvarez",
]
STATUSES = ["Closed", "Closed", "Closed", "Resolved", "Pending customer"]
PRIORITIES = ["P1", "P2", "P2", "P3", "P3", "P4"]
CHANNELS = ["Phone", "Email", "Portal", "On site"]


def _routine(rng: random.Random, model: str, serial: str, day: date) -> tuple[str, str]:
    """A routine problem and resolution: numbers, codes and boilerplate, no fact a question needs."""
    invoice = f"INV-{rng.randint(20000, 20999)}"
    fw_old = f"3.{rng.randint(0, 9)}.{rng.randint(0, 9)}"
    fw_new = f"3.{rng.randint(0, 9)}.{rng.randint(0, 9)}"
    visit = (day + timedelta(days=rng.randint(3, 20))).isoformat()
    warranty = (day + timedelta(days=rng.randint(100, 900))).isoformat()
    bolts = rng.choice(["mounting bolts", "inlet flange bolts", "coupling guard screws"])
    choices = [
        (
            f"Customer asked for a copy of invoice {invoice} for the {model} service.",
            f"Sent invoice {invoice} again by email; no charge for the copy.",
        ),
        (
            "Customer cannot log in to the service portal after a password change.",
            "Reset the portal password and confirmed the login with the customer.",
        ),
        (
            f"The {model} pump, serial {serial}, rattles at start-up.",
            f"Found loose {bolts}; tightened them and the noise stopped.",
        ),
        (
            f"Customer asks whether firmware {fw_old} on the {model} is current.",
            f"Explained that {fw_new} is the latest general release; no update needed for their use.",
        ),
        (
            f"Annual maintenance due for the {model}, serial {serial}.",
            f"Booked the maintenance visit for {visit}; technician to bring the standard service kit.",
        ),
        (
            "Customer reports that the monthly usage report did not arrive.",
            "Report was held by the mail filter; re-sent it and added our address to the safe list.",
        ),
        (
            f"Request to move the {model} by two metres during building work.",
            f"Quoted the relocation under quote Q-{rng.randint(5000, 5999)}; customer to confirm.",
        ),
        (
            f"Warranty question for serial {serial}.",
            f"Warranty runs until {warranty}; told the customer.",
        ),
    ]
    return rng.choice(choices)


def _ticket(
    number: int, day: date, fields: list[tuple[str, str]], problem: str, resolution: str
) -> dict[str, str]:
    lines = [f"Date: {day.isoformat()}", *(f"{key}: {value}" for key, value in fields)]
    lines += [f"Problem: {problem}", f"Resolution: {resolution}"]
    return {"title": f"Ticket FH-{number}", "text": "\n".join(lines)}


def generate(seed: int = SEED) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """The tickets (in ticket-number order) and the questions, the same for the same seed."""
    rng = random.Random(seed)
    sites = list(CUSTOMERS.values())
    site_owner = {site: customer for customer, site in CUSTOMERS.items()}
    site_model = {site: rng.choice(list(MODELS)) for site in sites}
    # every model has at least one site, so that every defect ticket has a question through a site
    for model, site in zip(MODELS, rng.sample(sites, len(MODELS)), strict=False):
        site_model[site] = model
    site_serial = {site: f"{MODELS[site_model[site]][0]}-{rng.randint(10000, 99999)}" for site in sites}

    # the kind of each ticket: installations among the first third (a site's pump is installed before its
    # defect is diagnosed or the site changes hands), the other fact tickets and routine ones anywhere after
    kinds: list[tuple[str, str]] = [("routine", "")] * N_TICKETS
    early = N_TICKETS // 3
    install_at = [0, *sorted(rng.sample(range(1, early), len(sites) - 1))]  # the archive opens with one
    for position, site in zip(install_at, sites, strict=True):
        kinds[position] = ("install", site)
    later = [("defect", model) for model in MODELS] + [("takeover", site) for site in TAKEOVERS]
    for position, kind in zip(rng.sample(range(early, N_TICKETS), len(later)), later, strict=True):
        kinds[position] = kind
    numbers = {i: FIRST_TICKET + i for i in range(N_TICKETS)}
    day0 = date(2023, 1, 9)
    days = sorted(day0 + timedelta(days=rng.randint(0, 540)) for _ in kinds)

    installed: list[str] = []
    taken_over: set[str] = set()

    def owner(site: str) -> str:
        """The site's customer at this point of the archive."""
        return site_owner[site] if site in taken_over or site not in TAKEOVERS else TAKEOVERS[site]

    tickets: list[dict[str, str]] = []
    facts: dict[tuple[str, str], int] = {}  # (kind, key) -> ticket number
    for i, (kind, key) in enumerate(kinds):
        number, day = numbers[i], days[i]
        agent = rng.choice(AGENTS)
        head = [
            ("Status", rng.choice(STATUSES)),
            ("Priority", rng.choice(PRIORITIES)),
            ("Channel", rng.choice(CHANNELS)),
        ]
        if kind == "install":
            site, model = key, site_model[key]
            customer = owner(site)
            installed.append(site)
            fields = [*head, ("Customer", customer), ("Site", site), ("Agent", agent)]
            fields += [("Product", model), ("Serial", site_serial[site])]
            problem = f"New installation requested at the {site}."
            resolution = (
                f"Installed a {model} pump, serial {site_serial[site]}, at the {site} for {customer}; "
                f"commissioning test passed at {rng.randint(3, 9)}.{rng.randint(0, 9)} bar."
            )
        elif kind == "defect":
            model = key
            _prefix, defect, symptom, fix = MODELS[model]
            site = rng.choice([s for s in installed if site_model[s] == model])
            customer = owner(site)
            serial = site_serial[site]
            fields = [*head, ("Customer", customer), ("Site", site), ("Agent", agent)]
            fields += [("Product", model), ("Serial", serial)]
            problem = f"Customer reports {symptom}."
            resolution = (
                f"Engineering confirmed the known {model} defect: {defect}. Fitted {fix}; "
                f"every {model} pump needs {fix} at its next service."
            )
        elif kind == "takeover":
            site = key
            old, new = TAKEOVERS[site], site_owner[site]
            taken_over.add(site)
            fields = [*head, ("Customer", new), ("Site", site), ("Agent", agent)]
            problem = f"Account change: {new} has taken over the {site} from {old}."
            resolution = (
                f"Moved the {site} and its equipment contract from {old} to {new}; "
                f"invoices go to {new} from {days[i].replace(day=1).isoformat()}."
            )
        else:
            site = rng.choice(installed)
            customer = owner(site)
            model = site_model[site]
            serial = site_serial[site]
            fields = [*head, ("Customer", customer), ("Site", site), ("Agent", agent)]
            fields += [("Product", model), ("Serial", serial)]
            problem, resolution = _routine(rng, model, serial, days[i])
        tickets.append(_ticket(number, day, fields, problem, resolution))
        if kind != "routine":
            facts[(kind, key)] = number

    def title(number: int) -> str:
        return f"Ticket FH-{number}"

    questions: list[dict[str, Any]] = []

    def ask(qid: str, question: str, answer: str, gold: list[int]) -> None:
        questions.append(
            {"id": qid, "question": question, "answer": answer, "gold_titles": [title(n) for n in gold]}
        )

    for n, model in enumerate(MODELS):
        fix = MODELS[model][3]
        ask(
            f"defect-{n}",
            f"Which part fixes the known defect of the {model} pump?",
            fix,
            [facts[("defect", model)]],
        )

    def via_installation(qid: str, question: str, site: str) -> None:
        """A question on the pump at ``site``: its installation ticket, then its model's defect ticket."""
        model = site_model[site]
        ask(qid, question, MODELS[model][3], [facts[("install", site)], facts[("defect", model)]])

    by_site = [s for s in sites if s not in TAKEOVERS]
    for n, site in enumerate(rng.sample(by_site, 8)):
        via_installation(
            f"site-{n}", f"What fixes the known defect of the pump installed at the {site}?", site
        )
    for n, customer in enumerate(rng.sample([c for c in CUSTOMERS if CUSTOMERS[c] not in TAKEOVERS], 8)):
        via_installation(
            f"customer-{n}",
            f"Which part should {customer} order for the known defect of the pump model installed for them?",
            CUSTOMERS[customer],
        )
    for n, site in enumerate(TAKEOVERS):
        new, model = site_owner[site], site_model[site]
        gold = [facts[("takeover", site)], facts[("install", site)], facts[("defect", model)]]
        ask(
            f"takeover-{n}",
            f"{new} took over a site from another customer: what fixes the known defect of the pump there?",
            MODELS[model][3],
            gold,
        )
    routine = [i for i, (kind, _key) in enumerate(kinds) if kind == "routine"]
    for n, i in enumerate(rng.sample(routine, 6)):
        text = tickets[i]["text"]
        resolution = text.rsplit("Resolution: ", 1)[1]
        ask(f"id-{n}", f"What was the resolution of ticket FH-{numbers[i]}?", resolution, [numbers[i]])
    for n, site in enumerate(rng.sample(by_site, 4)):
        serial = site_serial[site]
        gold = [facts[("install", site)]]
        ask(f"serial-{n}", f"At which site was the pump with serial number {serial} installed?", site, gold)
    return tickets, questions


def render(seed: int) -> dict[str, str]:
    tickets, questions = generate(seed)
    readme = (
        "# Generated ticket archive (issue 37)\n\n"
        f"Written by `python benchmarks/ticket_corpus.py --seed {seed}`: do not edit by hand "
        "(`--check` compares).\n\n"
        f'* `corpus.json`: {len(tickets)} tickets, a JSON list of `{{"title", "text"}}` '
        '(the passage is `title + "\\n" + text`).\n'
        f"* `questions.json`: {len(questions)} questions in the plain format "
        '(`{"id", "question", "answer", "gold_titles"}`); the docstring of the generator says '
        "what each kind (`defect`, `site`, `customer`, `takeover`, `id`, `serial`) needs.\n"
    )
    return {
        "corpus.json": json.dumps(tickets, indent=1, ensure_ascii=False) + "\n",
        "questions.json": json.dumps(questions, indent=1, ensure_ascii=False) + "\n",
        "README.md": readme,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="compare with the files in --out, write nothing")
    args = parser.parse_args(argv)
    files = render(args.seed)
    if args.check:
        stale = [
            name
            for name, text in files.items()
            if not (args.out / name).is_file() or (args.out / name).read_text(encoding="utf-8") != text
        ]
        for name in stale:
            print(f"{args.out / name} differs from the generator's output", file=sys.stderr)
        return 1 if stale else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (args.out / name).write_text(text, encoding="utf-8")
    print(f"wrote {', '.join(files)} to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
