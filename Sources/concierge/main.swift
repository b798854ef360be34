print("concierge")
