"""Architecture review: architect, ops and business debate a decision; an arbiter rules.

Run:  moot run architecture_review                       (embedded offline model)
      moot run architecture_review --model architect=local@0.9 --model arbiter=local@0.1
"""

from moot.cli import run_script
from moot.conditions import Consensus, MaxRounds, NoProgress, TokenBudget
from moot.roles import RoleAgent, role
from moot.scenario import RoleModels, Scenario
from moot.teams import Debate

CHOICES = ("split", "keep", "defer")
EXPERTS = ("architect", "ops", "business")

TASK = """Decision: should we split the billing module out of our monolith into its own service?

Context:
- One Python monolith, 8 engineers, deployed twice a week; billing is about 15% of the code.
- Billing changes rarely (about twice a month) but every billing bug is customer-visible.
- Billing shares 6 database tables with the orders module, including write access to orders.
- Last quarter, 3 of our 5 incidents started in non-billing code and took billing down with them.
- A payment-provider migration is planned in 4 months; the sales team wants usage-based pricing soon.

Answer "split" (start the split now), "keep" (stay in the monolith) or "defer" (prepare
boundaries now, decide after the payment-provider migration)."""


def build(models: RoleModels) -> Debate:
    return Debate(
        [RoleAgent(role(name), models.spec(name)) for name in EXPERTS],
        RoleAgent(role("arbiter"), models.spec("arbiter")),
        stop=Consensus() | NoProgress(1) | MaxRounds(2) | TokenBudget(40_000),
        choices=CHOICES,
    )


SCENARIO = Scenario(
    name="architecture_review",
    description="architect, ops and business debate splitting the billing module; the arbiter rules",
    task=TASK,
    roles=(*EXPERTS, "arbiter"),
    build=build,
)

if __name__ == "__main__":
    run_script(SCENARIO)
