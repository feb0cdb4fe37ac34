"""The ``stoker`` command: thin; it parses arguments, calls the service, prints."""
