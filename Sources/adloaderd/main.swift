print("adloaderd: not built yet")
