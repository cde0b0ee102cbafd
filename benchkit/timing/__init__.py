"""Wall-time measurement: clock seam, compiled loop, measurement loop, Timer."""
