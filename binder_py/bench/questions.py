"""Ten real WikiTQ dev questions with 20 scripted candidate programs each.

The programs are what a program-writing model plausibly samples at temperature 0.4
for the question (Binder-Python over the lower-cased table, as the pipeline shows
it): identical samples repeat, several candidates ask the SAME ``f_col`` question,
some are plain pandas, a couple fail (a wrong column name, a bad conversion).
``VARIANTS`` lists ``(count, program)``; the counts of a question sum to 20 and the
sampled order interleaves the variants.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScriptedQuestion:
    id: str
    variants: tuple[tuple[int, str], ...]

    def samples(self, n: int = 20) -> list[str]:
        """``n`` sampled programs: the variants repeated by their counts, interleaved."""
        pools = [[program] * count for count, program in self.variants]
        out: list[str] = []
        while any(pools):
            for pool in pools:
                if pool:
                    out.append(pool.pop())
        return (out * (n // max(1, len(out)) + 1))[:n]


Q = ScriptedQuestion

QUESTIONS: tuple[ScriptedQuestion, ...] = (
    Q("nt-305", (  # which was the first country to sell weapons to iraq? (120 rows)
        (5, 'df["first year"] = f_col("What is the first year delivered?", "Year(s) delivered")\n'
            'df.sort_values("first year").iloc[0]["Country"]'),
        (3, 'df["start"] = f_col("What is the first year delivered?", "Year(s) delivered")\n'
            'df.loc[df["start"].idxmin(), "Country"]'),
        (2, 'df["start"] = df["Year(s) delivered"].str[:4].astype(int)\ndf.sort_values("start").iloc[0]["Country"]'),
        (3, 'df["year"] = pd.to_numeric(df["Year(s) delivered"].str.split("-").str[0], errors="coerce")\n'
            'df.loc[df["year"].idxmin(), "Country"]'),
        (2, 'df["european"] = f_col("Is the country in Europe?", "Country")\n'
            'df["start"] = f_col("What is the first year delivered?", "Year(s) delivered")\n'
            'df[df["european"]].sort_values("start").iloc[0]["Country"]'),
        (2, 'df["aircraft"] = f_col("Is it an aircraft?", "Weapon description")\n'
            'df[df["aircraft"]].sort_values("Year(s) delivered").iloc[0]["Country"]'),
        (1, 'df.sort_values("Year delivered").iloc[0]["Country"]'),
        (2, 'f_val("Which country delivered weapons first?", df[["Country", "Year(s) delivered"]])'),
    )),
    Q("nt-1798", (  # what was the number of swedes in the top fifteen? (116 rows)
        (5, 'df["swedish"] = f_col("Is the nation Sweden?", "Nation")\n'
            'df.head(15)[df.head(15)["swedish"]].shape[0]'),
        (3, 'top = df.head(15)\ntop[f_col("Is the nation Sweden?", "Nation").head(15)].shape[0]'),
        (2, 'df["swede"] = f_col("Is this skier from Sweden?", ["Name", "Nation"])\n'
            'int(df.head(15)["swede"].sum())'),
        (2, 'top = df.head(15)\ntop[top["Nation"] == "sweden"].shape[0]'),
        (3, 'int((df.iloc[:15]["Nation"] == "sweden").sum())'),
        (1, 'df[df["Country"] == "sweden"].head(15).shape[0]'),
        (2, 'f_val("How many skiers are from Sweden?", df.head(15)[["Name", "Nation"]])'),
        (2, 'df["nordic"] = f_col("Is the nation in Scandinavia?", "Nation")\n'
            'df["swedish"] = f_col("Is the nation Sweden?", "Nation")\n'
            'int((df.head(15)["nordic"] & df.head(15)["swedish"]).sum())'),
    )),
    Q("nt-727", (  # baranov has played from 2004 to the present. what is his nationality? (189 rows)
        (6, 'df[df["Name"].str.contains("baranov")]["Nationality"].iloc[0]'),
        (3, 'df["current"] = f_col("Is the career ongoing (to the present)?", "Spartak career")\n'
            'df[df["Name"].str.contains("baranov") & df["current"]]["Nationality"].iloc[0]'),
        (3, 'df["start"] = f_col("What year did the career start?", "Spartak career")\n'
            'df[(df["start"] == 2004) & df["Name"].str.contains("baranov")]["Nationality"].iloc[0]'),
        (2, 'df["surname"] = f_col("What is the surname?", "Name")\n'
            'df[df["surname"] == "baranov"]["Nationality"].tolist()'),
        (2, 'df[f_col("Is the player named baranov?", "Name")]["Nationality"].iloc[0]'),
        (2, 'df["start"] = f_col("What year did the career start?", "Spartak career")\n'
            'df["ongoing"] = f_col("Is the career ongoing (to the present)?", "Spartak career")\n'
            'df[(df["start"] == 2004) & df["ongoing"]]["Nationality"].iloc[0]'),
        (2, 'df[df["Player"] == "baranov"]["Nationality"].iloc[0]'),
    )),
    Q("nt-46", (  # what is the largest penalty? (60 rows)
        (6, 'df["penalties"] = f_col("How many penalties in total?", "Penalties (P+P+S+S)")\ndf["penalties"].max()'),
        (3, 'f_col("How many penalties in total?", "Penalties (P+P+S+S)").max()'),
        (4, 'df["Penalties (P+P+S+S)"].str.split(" ").str[0].astype(int).max()'),
        (2, 'df["p"] = f_col("What is the number before the brackets?", "Penalties (P+P+S+S)")\ndf["p"].max()'),
        (2, 'f_val("What is the largest penalty?", df[["Name", "Penalties (P+P+S+S)"]])'),
        (1, 'df["Penalties"].max()'),
        (2, 'df["standing"] = f_col("How many standing shooting penalties?", "Penalties (P+P+S+S)")\n'
            'df["total"] = f_col("How many penalties in total?", "Penalties (P+P+S+S)")\ndf["total"].max()'),
    )),
    Q("nt-670", (  # what is the difference in year of birth between vachon and vaid? (73 rows)
        (6, 'df["born"] = f_col("What year was the person born?", "Lifetime")\n'
            'df[df["Name"].str.contains("vachon")]["born"].iloc[0] - df[df["Name"].str.contains("vaid")]["born"].iloc[0]'),
        (3, 'df["birth year"] = f_col("What year was the person born?", "Lifetime")\n'
            'abs(df.loc[df["Name"].str.contains("vachon"), "birth year"].iloc[0] - '
            'df.loc[df["Name"].str.contains("vaid"), "birth year"].iloc[0])'),
        (3, 'df["born"] = df["Lifetime"].str.extract(r"(\\d{4})")[0].astype(int)\n'
            'df[df["Name"].str.contains("vachon")]["born"].iloc[0] - df[df["Name"].str.contains("vaid")]["born"].iloc[0]'),
        (2, 'df["born"] = f_col("What year was the person born?", ["Name", "Lifetime"])\n'
            'df[df["Name"].str.contains("vachon")]["born"].iloc[0] - df[df["Name"].str.contains("vaid")]["born"].iloc[0]'),
        (2, 'df["born"] = df["Lifetime"].astype(int)\n'
            'df[df["Name"].str.contains("vachon")]["born"].iloc[0] - df[df["Name"].str.contains("vaid")]["born"].iloc[0]'),
        (2, 'df["american"] = f_col("Is the person American?", "Nationality")\n'
            'df["born"] = f_col("What year was the person born?", "Lifetime")\n'
            'df[df["Name"].str.contains("vachon")]["born"].iloc[0] - df[df["Name"].str.contains("vaid")]["born"].iloc[0]'),
        (2, 'f_val("How many years apart were vachon and vaid born?", '
            'df[df["Name"].str.contains("vachon|vaid")][["Name", "Lifetime"]])'),
    )),
    Q("nt-2832", (  # the venue listed before olympic stadium on 1950-08-27? (72 rows)
        (6, 'df.iloc[df[df["Date"] == "1950-08-27"].index[0] - 1]["Venue"]'),
        (3, 'df["olympic"] = f_col("Is the venue an olympic stadium?", "Venue")\n'
            'i = df[df["olympic"] & (df["Date"] == "1950-08-27")].index[0]\ndf.loc[i - 1, "Venue"]'),
        (3, 'df["city"] = f_col("In which city is the venue?", "Venue")\n'
            'df.loc[df[df["Date"] == "1950-08-27"].index[0] - 1, "Venue"]'),
        (2, 'df["home"] = f_col("Is it a home game?", "Venue")\n'
            'df.loc[df.index[df["Date"] == "1950-08-27"][0] - 1, "Venue"]'),
        (2, 'df["olympic"] = f_col("Is the venue an olympic stadium?", "Venue")\n'
            'df["city"] = f_col("In which city is the venue?", "Venue")\n'
            'prev = df[df["Date"] < "1950-08-27"]\nprev.iloc[-1]["Venue"]'),
        (2, 'df[df["date"] == "1950-08-27"]["Venue"].iloc[0]'),
        (2, 'df["year"] = f_col("What year is the date?", "Date")\ndf[df["year"] == 1950].iloc[-2]["Venue"]'),
    )),
    Q("nt-4175", (  # which team has the highest number of consecutive calder trophy winners? (81 rows)
        (4, 'streak = (df["Team"] != df["Team"].shift()).cumsum()\n'
            'df.groupby(streak)["Team"].agg(["first", "size"]).sort_values("size").iloc[-1]["first"]'),
        (3, 'df["Team"].value_counts().idxmax()'),
        (4, 'df["original six"] = f_col("Is the team one of the original six?", "Team")\n'
            'df[df["original six"]]["Team"].value_counts().idxmax()'),
        (3, 'df["defense"] = f_col("Is the player a defenseman?", "Position")\n'
            'streak = (df["Team"] != df["Team"].shift()).cumsum()\n'
            'df.groupby(streak)["Team"].agg(["first", "size"]).sort_values("size").iloc[-1]["first"]'),
        (2, 'df["canadian"] = f_col("Is the team based in Canada?", "Team")\n'
            'df["original six"] = f_col("Is the team one of the original six?", "Team")\n'
            'df[df["canadian"]]["Team"].value_counts().idxmax()'),
        (2, 'f_val("Which team won the trophy in the most consecutive seasons?", df[["Season", "Team"]])'),
        (2, 'df.groupby("team").size().idxmax()'),
    )),
    Q("nt-69", (  # when was the last time kansas state lost with 0 points in manhattan? (66 rows)
        (6, 'df["loser points"] = f_col("How many points did the losing team score?", "Losing team")\n'
            'df[(df["Site"] == "manhattan") & df["Losing team"].str.contains("kansas state") & '
            '(df["loser points"] == 0)]["Year"].max()'),
        (3, 'df["points"] = f_col("How many points did the losing team score?", "Losing team")\n'
            'df["k-state lost"] = f_col("Did kansas state lose?", "Losing team")\n'
            'df[df["k-state lost"] & (df["points"] == 0) & (df["Site"] == "manhattan")]["Year"].iloc[-1]'),
        (3, 'df[(df["Site"] == "manhattan") & (df["Losing team"] == "kansas state 0")]["Year"].max()'),
        (2, 'df[(df["Site"] == "manhattan") & df["Losing team"].str.endswith(" 0") & '
            'df["Losing team"].str.startswith("kansas state")]["Year"].iloc[-1]'),
        (2, 'df["score"] = f_col("What is the score of the losing team?", ["Losing team"])\n'
            'df[(df["score"] == 0) & (df["Site"] == "manhattan")]["Year"].max()'),
        (2, 'df[(df["Location"] == "manhattan")]["Year"].max()'),
        (2, 'f_val("When did kansas state last lose with 0 points in manhattan?", '
            'df[df["Site"] == "manhattan"][["Year", "Losing team"]])'),
    )),
    Q("nt-4918", (  # which city in wisconsin is the most populous, based on the 2010 census? (190 rows)
        (7, 'df.sort_values("Population (2010 Census)").iloc[-1]["City"]'),
        (3, 'df.loc[df["Population (2010 Census)"].idxmax(), "City"]'),
        (3, 'df["in wisconsin"] = f_col("Is the city in Wisconsin?", "City")\n'
            'df[df["in wisconsin"]].sort_values("Population (2010 Census)").iloc[-1]["City"]'),
        (3, 'df["county seat"] = f_col("Is the city a county seat?", ["City", "County(ies)"])\n'
            'df.sort_values("Population (2010 Census)").iloc[-1]["City"]'),
        (2, 'df["in wisconsin"] = f_col("Is the city in Wisconsin?", "City")\n'
            'df.loc[df[df["in wisconsin"]]["Population (2010 Census)"].idxmax(), "City"]'),
        (2, 'df.sort_values("Population 2010").iloc[-1]["City"]'),
    )),
    Q("nt-694", (  # when was joe clark first elected? (124 rows)
        (7, 'df[df["Member"] == "joe clark"]["First elected"].iloc[0]'),
        (3, 'df["first name"] = f_col("What is the member\'s first name?", "Member")\n'
            'df[df["Member"].str.contains("clark") & (df["first name"] == "joe")]["First elected"].iloc[0]'),
        (3, 'df["year"] = f_col("What is the first year elected?", "First elected")\n'
            'df[df["Member"] == "joe clark"]["year"].min()'),
        (2, 'df["labor"] = f_col("Is the party the labor party?", "Party")\n'
            'df[df["Member"] == "joe clark"]["First elected"].iloc[0]'),
        (2, 'df[f_col("Is the member named joe clark?", "Member")]["First elected"].iloc[0]'),
        (1, 'df[df["Name"] == "joe clark"]["First elected"].iloc[0]'),
        (2, 'df["year"] = f_col("What is the first year elected?", "First elected")\n'
            'df["state name"] = f_col("What is the full state name?", "State")\n'
            'df[df["Member"] == "joe clark"]["year"].iloc[0]'),
    )),
)

assert all(sum(c for c, _ in q.variants) == 20 for q in QUESTIONS), "each question scripts 20 samples"
