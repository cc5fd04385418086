df = df[f_col("Is it in North America?", ["made in"]) & f_col("No chemicals?", ["shirt"])]
df.sort_values("sales", ascending=False)["shirt"].iloc[0]
