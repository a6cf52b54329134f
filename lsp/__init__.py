"""Language server for editors (pygls)."""
