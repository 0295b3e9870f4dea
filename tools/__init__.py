"""What a contributor runs from the repository root that needs the package's modules as a library (run with
``python3 -m tools.<name>``); nothing here is installed with the package."""
