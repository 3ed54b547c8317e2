"""The JSON annotation API (INTERFACES.md, docs/annotation-api.md): views, shapes, the OpenAPI schema."""
