print("adloader: not built yet")
