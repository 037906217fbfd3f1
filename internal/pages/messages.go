/*
Copyright 2026 The Switchboard Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package pages

// The catalogue: every text a page shows, in each language served. The
// Japanese follows seed 000 §3.1.2 where the seed gives a text
// (「連携が完了しました」, 次のステップ, 使い方).

// The layout's own.
var (
	forPlatformTeam = Text{En: "For the platform team", Ja: "運用担当の方へ"}
	retryText       = Text{En: "This page tries again by itself in %s seconds.", Ja: "このページは %s 秒後に自動でもう一度試します。"}
)

// Shared by many pages.
var (
	TryAgainTitle   = Text{En: "Try again in a moment", Ja: "しばらくしてからもう一度お試しください"}
	NotFoundTitle   = Text{En: "Not found", Ja: "見つかりません"}
	NotSetUpTitle   = Text{En: "Not set up yet", Ja: "まだ設定が済んでいません"}
	NotSetUpLine    = Text{En: "This service's sign-in is missing part of its setup. Please tell the person who gave you this link.", Ja: "このサービスのサインイン設定に不足があります。このリンクを渡した方にお知らせください。"}
	TooManyTitle    = Text{En: "Too many requests", Ja: "リクエストが多すぎます"}
	TooManyLine     = Text{En: "Too many requests came from your network just now.", Ja: "お使いのネットワークから短時間に多くのリクエストがありました。"}
	SomethingTitle  = Text{En: "Something went wrong", Ja: "問題が発生しました"}
	SomethingLine   = Text{En: "The server could not answer this request.", Ja: "サーバーがこのリクエストに応答できませんでした。"}
	CloseThisPage   = Text{En: "You can close this page.", Ja: "このページは閉じてかまいません。"}
	TheProvider     = Text{En: "The service", Ja: "接続先のサービス"}
	Discord         = Text{En: "Discord", Ja: "Discord"}
	ProviderDownTtl = Text{En: "%s did not answer", Ja: "%s から応答がありませんでした"}
)

// The connect walk of the OAuth kinds (Notion, Google Calendar, Google
// Sheets): the connect link, the provider's callback, the success pages.
var (
	ConnectInvalidTitle = Text{En: "This connect link is not valid", Ja: "この接続リンクは使えません"}
	ConnectInvalidLine  = Text{En: "Ask the person who gave you this link for a new one. A link works once: a new one is made after each successful connection.", Ja: "このリンクを渡した方に新しいリンクを頼んでください。リンクは一度だけ使えます。接続が成功するたびに新しいリンクが作られます。"}
	UnknownTargetLine   = Text{En: "Nothing connects under %s.", Ja: "%s には接続先がありません。"}
	StartFailedLine     = Text{En: "The sign-in could not be started.", Ja: "サインインを開始できませんでした。"}
	ConnectExpiredTitle = Text{En: "This connect link has expired", Ja: "この接続リンクは有効期限が切れています"}
	ConnectExpiredLine  = Text{En: "Connect links work for %d minutes. A new one is ready: ask the person who gave you this link for it.", Ja: "接続リンクの有効期間は %d 分です。新しいリンクが用意されているので、このリンクを渡した方に頼んでください。"}
	AlreadyTitle        = Text{En: "Already connected", Ja: "すでに接続されています"}
	AlreadyLine         = Text{En: "This connection already has access that works, so nothing was replaced.", Ja: "この接続はすでに有効なアクセス権を持っているため、何も置き換えていません。"}
	SignInInvalidTitle  = Text{En: "This sign-in link is not valid", Ja: "このサインインリンクは使えません"}
	SignInInvalidLine   = Text{En: "It was already used, it expired (sign-ins last 10 minutes), or it was not started here.", Ja: "すでに使われたか、期限が切れたか（サインインの有効期間は 10 分です）、ここで始めたものではありません。"}
	CheckFailedLine     = Text{En: "The sign-in could not be checked.", Ja: "サインインを確認できませんでした。"}
	DeniedTitle         = Text{En: "Access was not granted", Ja: "アクセスが許可されませんでした"}
	DeniedLine          = Text{En: "%s answered: %s.", Ja: "%s の応答: %s"}
	GoneLine            = Text{En: "The connection this sign-in was for no longer exists.", Ja: "このサインインの接続先はもうありません。"}
	HandoverFailedLine  = Text{En: "Your access could not be handed over.", Ja: "アクセス権を引き渡せませんでした。"}
	ConnectingTitle     = Text{En: "Almost done", Ja: "まもなく完了します"}
	ConnectingLine      = Text{En: "Your access was handed over and is saved in a moment.", Ja: "アクセス権を引き渡しました。まもなく保存されます。"}
	CodeRefusedTitle    = Text{En: "The sign-in code was refused", Ja: "サインインのコードが受け付けられませんでした"}
	CodeRefusedLine     = Text{En: "%s did not accept the code.", Ja: "%s がコードを受け付けませんでした。"}
	SaveFailedTitle     = Text{En: "Your access could not be saved", Ja: "アクセス権を保存できませんでした"}
	ConnectedTitle      = Text{En: "Connected", Ja: "接続が完了しました"}
	ConnectedLine       = Text{En: "Your access is saved; everything else happens on its own.", Ja: "アクセス権を保存しました。あとは自動で進みます。"}
	StartAgainConnect   = Text{En: "Start again from the connect link you were given.", Ja: "受け取った接続リンクからやり直してください。"}
)

// Self-service sign-up (seed 000 §1.1): its refusals. Its success page is
// Notion's.
var (
	SignUpNotFoundTitle = Text{En: "There is no sign-up here", Ja: "この登録ページはありません"}
	SignUpNotFoundLine  = Text{En: "Check the address, or ask the people who gave it to you.", Ja: "アドレスを確認するか、このアドレスを教えてくれた方に尋ねてください。"}
	SignUpClosedTitle   = Text{En: "Sign-up is closed", Ja: "登録の受付は終了しました"}
	SignUpClosedLine    = Text{En: "No new sign-ups are taken here now. Integrations made before keep working.", Ja: "現在、新しい登録は受け付けていません。すでに作成された連携はそのまま動きます。"}
	SignUpFullTitle     = Text{En: "Sign-up is full", Ja: "登録数が上限に達しました"}
	SignUpFullLine      = Text{En: "This sign-up has made as many integrations as it may, so none was made for your workspace. Please tell the people who gave you this address.", Ja: "この登録ページで作成できる連携の数が上限に達したため、あなたのワークスペースの連携は作成されませんでした。このアドレスを教えてくれた方にお知らせください。"}
	SignUpBusyLine      = Text{En: "Many people are signing up right now.", Ja: "現在、多くの方が登録中です。"}
)

// Notion's success page (seed 000 §3.1.2), in the words Notion's own
// screens use today (notion.com/help/webhook-actions).
var (
	NotionDoneTitle     = Text{En: "Connected to Notion", Ja: "連携が完了しました"}
	NotionWorkspaceLine = Text{En: "Workspace: %s", Ja: "ワークスペース: %s"}
	NotionOpenDatabase  = Text{En: "Open %s in Notion", Ja: "Notion で %s を開く"}
	NotionPreparingLine = Text{En: "Your database %s is being created in your workspace; it appears in Notion's sidebar within a minute.", Ja: "データベース %s をワークスペースに作成しています。1 分ほどで Notion のサイドバーに表示されます。"}
	NextStepsHeading    = Text{En: "Next steps", Ja: "次のステップ"}
	NothingToSetUpLine  = Text{En: "Nothing to set up: Notion tells this service when a page changes.", Ja: "設定は不要です。ページが変わると Notion からこのサービスに通知が届きます。"}
	BackfillLine        = Text{En: "Pages whose %s holds an arXiv link are filled in within %d minutes. To have them filled within seconds (Notion's paid plans), add a database automation:", Ja: "%s に arXiv のリンクがあるページは %d 分以内に入力されます。数秒で入力されるようにするには（Notion の有料プラン）、データベースのオートメーションを追加します:"}
	AutoStepOpen        = Text{En: "Open the database in Notion, click the lightning-bolt button (Automations) at its top right, then New automation.", Ja: "Notion でデータベースを開き、右上の稲妻のボタン（オートメーション）から「新規オートメーション」を選びます。"}
	AutoStepTrigger     = Text{En: "Trigger: Property edited, and choose %s.", Ja: "トリガー: 「プロパティが編集されたとき」で %s を選びます。"}
	AutoStepAction      = Text{En: "Action: Send webhook.", Ja: "アクション: 「Webhook を送信」。"}
	AutoStepURL         = Text{En: "URL: paste the address below.", Ja: "URL: 下のアドレスを貼り付けます。"}
	AutoStepURLAsk      = Text{En: "URL: ask the person who gave you the connect link for this integration's webhook address.", Ja: "URL: この連携の Webhook アドレスを、接続リンクを渡した方に尋ねてください。"}
	AutoStepTick        = Text{En: "Under the page properties to send, tick %s.", Ja: "送信するページプロパティで %s にチェックを入れます。"}
	AutoStepCreate      = Text{En: "Click Create. There is no method or body to fill in: Notion sends the page itself.", Ja: "「作成」を押します。メソッドや本文の入力はありません。Notion がページそのものを送ります。"}
	UsageHeading        = Text{En: "How to use it", Ja: "使い方"}
	UseStepPage         = Text{En: "Add a page to the database.", Ja: "データベースに新しいページを作成"}
	UseStepLink         = Text{En: "Put an arXiv URL in %s, e.g. https://arxiv.org/abs/2301.12345.", Ja: "%s プロパティに arXiv の URL を入力（例: https://arxiv.org/abs/2301.12345）"}
	UseStepFilled       = Text{En: "Moments later its title, authors, summary and year are filled in.", Ja: "数秒後、自動的にタイトル・著者・要約・出版年が入力されます"}
)

// A share link (seed 003): its refusals and its Discord sign-in.
var (
	LinkNotFoundTitle  = Text{En: "This link does not exist", Ja: "このリンクは存在しません"}
	LinkNotFoundLine   = Text{En: "Check that you opened the whole link, or ask the person who shared it for a new one.", Ja: "リンク全体を開いたか確認するか、共有した方に新しいリンクを頼んでください。"}
	LinkExpiredTitle   = Text{En: "This link has expired", Ja: "このリンクは有効期限が切れています"}
	LinkExpiredLine    = Text{En: "The file is no longer shared. Ask the person who shared it to send it again.", Ja: "ファイルの共有は終了しました。共有した方にもう一度送ってもらってください。"}
	LinkOtherUserTitle = Text{En: "This link is for someone else", Ja: "このリンクは別の方宛てです"}
	LinkOtherUserLine  = Text{En: "The Discord account you signed in with is not the one this file was shared with.", Ja: "サインインした Discord アカウントは、このファイルの共有先ではありません。"}
	LinkBusyLine       = Text{En: "The link could not be opened just now.", Ja: "いまはリンクを開けませんでした。"}
	SignInsBusyLine    = Text{En: "Too many sign-ins for this link are in progress in other browsers.", Ja: "このリンクへのサインインがほかのブラウザーで多数進行中です。"}
	NoSignInLine       = Text{En: "This service does not offer a Discord sign-in.", Ja: "このサービスは Discord でのサインインに対応していません。"}
	OpenLinkAgain      = Text{En: "Open your link again.", Ja: "リンクをもう一度開いてください。"}
	OpenLinkSoon       = Text{En: "Open your link again in a moment.", Ja: "少し待ってからリンクをもう一度開いてください。"}
	DiscordBusyTitle   = Text{En: "Discord is busy", Ja: "Discord が混み合っています"}
	DiscordBusyLine    = Text{En: "Discord is limiting sign-ins right now. Your sign-in is kept.", Ja: "Discord がサインインを制限しています。サインインの情報は保たれています。"}
	SessionFailedLine  = Text{En: "Your sign-in could not be saved.", Ja: "サインインを保存できませんでした。"}
	SignedInTitle      = Text{En: "Signed in", Ja: "サインインしました"}
	SignedInLine       = Text{En: "You are signed in with Discord as %s. Open your link again to receive the file.", Ja: "Discord の %s としてサインインしました。リンクをもう一度開くとファイルを受け取れます。"}
)
