"""One router per resource: engine (hand, referee, rules, health), scan, stream, overlay."""
