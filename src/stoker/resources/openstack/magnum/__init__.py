"""Magnum: Heat's HIDDEN OS::Magnum::Bay placeholder (no client plugin: stoker has no
Magnum types yet)."""
