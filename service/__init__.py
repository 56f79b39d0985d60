"""service: the FastAPI app (REST and WebSocket API), the phone camera page and the OBS overlay."""
