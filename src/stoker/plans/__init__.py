"""Plans: what a create or update would do, as a versioned document that can be saved
and applied later (docs/plans.md).

Owns: the document's shape (``plan.schema.json``, ``document``), key-level differences
of values (``diff``), a stack's state fingerprint (``fingerprint``) and the plan errors
(``errors``). The decisions themselves are the engine's previews (engine.preview,
engine.nested_preview); applying a plan is the service's (``plan_actions``).

Must not: run an action or write to the store.
"""
