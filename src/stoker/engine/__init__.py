"""The engine: stacks at run time, the walk over their graph, one module per action."""
