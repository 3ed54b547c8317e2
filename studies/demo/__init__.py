"""The demo studies built from the DiaBLa subset in fixtures/diabla/ (CC BY-SA 4.0)."""
