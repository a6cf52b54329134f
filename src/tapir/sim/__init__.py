"""A simulated Android device that the real adb server talks to."""
