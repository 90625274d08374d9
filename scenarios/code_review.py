"""Code review: the generator writes a small Python function from a spec, the critic reviews it.

Run:  moot run code_review            (embedded offline model)
      python scenarios/code_review.py --model critic=local@0.1
"""

from moot.cli import run_script
from moot.conditions import MaxRounds, NoImprovement, ScoreThreshold, TokenBudget
from moot.roles import RoleAgent, role
from moot.scenario import RoleModels, Scenario
from moot.teams import Reflection

TASK = """Write a Python function `slugify(title: str) -> str` that turns a title into a URL slug:
- lowercase the text;
- replace every run of characters that are not ASCII letters or digits with a single hyphen;
- remove hyphens at the start and the end;
- return "" for a title with no letters or digits.
Include type hints and a docstring. Example: slugify("  Hello, World! 2024 ") == "hello-world-2024"."""


def build(models: RoleModels) -> Reflection:
    return Reflection(
        RoleAgent(role("generator"), models.spec("generator")),
        RoleAgent(role("critic"), models.spec("critic")),
        stop=ScoreThreshold(85) | NoImprovement(2) | MaxRounds(3) | TokenBudget(20_000),
    )


SCENARIO = Scenario(
    name="code_review",
    description="generator writes slugify(), critic reviews it (reflection)",
    task=TASK,
    roles=("generator", "critic"),
    build=build,
)

if __name__ == "__main__":
    run_script(SCENARIO)
